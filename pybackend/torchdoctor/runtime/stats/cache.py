"""A bounded memo keyed by object identity and a fingerprint (version, storage, probe).

The debugger asks for the same tensors at every stop; a hit must cost nothing. Entries hold a
weak reference, so a cached tensor can still be freed (its entry goes with it), and a recycled
``id()`` can never return another object's statistics. Thread-safe: pydevd may resolve
variables from several threads.

Sized for real models: an LLM has thousands of parameter tensors and as many gradients, and a
walk over a model must never evict its own entries (an LRU smaller than the walk misses on
every entry, every time). The bound is on entries and on an estimate of their bytes, whichever
is reached first: 16,384 entries of statistics take a few MiB.

Misses consult the request's time budget (:mod:`budget`): a computation that does not fit is
not started; the caller gets :data:`PENDING` (the line says ``stats…``) and nothing is cached.
What was put off at a stop is remembered for that stop: a later Variables listing of the same
stop does not try it again (it answers from the cache alone, as fast as plain debugpy); a
hover, an expand or the next stop computes it.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable, Deque, Dict, Hashable, Optional

from . import budget

_MISS = object()

# What a computation that did not fit in the request's budget returns instead of statistics.
PENDING_NOTE = "stats…"
PENDING: Dict[str, object] = {"note": PENDING_NOTE, "pending": True}

DEFAULT_MAX_ENTRIES = 16_384
DEFAULT_MAX_BYTES = 64 << 20


def is_pending(value: Any) -> bool:
    return isinstance(value, dict) and value.get("pending") is True


def entry_bytes(value: Any) -> int:
    """A cheap over-estimate of what a cached value holds (a flat dict of scalars, usually)."""
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(64 + (sys.getsizeof(v) if isinstance(v, (str, bytes, list)) else 32) for v in value.values())
    return size


class IdentityCache:
    """LRU of ``id(obj) -> (weakref, fingerprint, value, bytes)`` with hit/miss counters."""

    def __init__(self, maxsize: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self.deferred = 0
        self.bytes = 0
        self._entries: "OrderedDict[int, tuple]" = OrderedDict()
        self._lock = threading.Lock()
        # ids of freed objects, queued by weakref callbacks (which may run inside a locked
        # section, on any thread) and dropped at the next insertion.
        self._dead: Deque[int] = deque()
        # id -> (weakref, fingerprint) of what a request put off at the stop ``_put_off_epoch``.
        self._put_off_ids: Dict[int, tuple] = {}
        self._put_off_epoch: Any = None

    def get_or_compute(
        self, obj: Any, fingerprint: Optional[Hashable], compute: Callable[[], Any], budgeted: bool = True
    ) -> Any:
        """``compute()`` unless ``obj`` was seen with the same fingerprint; None disables caching.

        With ``budgeted`` and an active request budget, a miss whose estimated cost does not fit
        returns :data:`PENDING` (a copy) instead of computing.
        """
        if fingerprint is not None:
            value = self._get(obj, fingerprint)
            if value is not _MISS:
                return value
        active = budget.current() if budgeted else None
        if active is not None and active.listing and self._put_off_before(obj, fingerprint, active.epoch):
            return self._defer(active)  # a re-listing of the same stop: a pure cache look-up
        if active is not None and not active.allows(budget.estimate(obj)):
            return self._put_off(obj, fingerprint, active)
        start = time.monotonic()
        try:
            value = self._run(active, compute)
        except budget.OutOfTime:
            budget.record(obj, (time.monotonic() - start) * 2)  # it needed more than that: at least twice
            return self._put_off(obj, fingerprint, active)
        budget.record(obj, time.monotonic() - start)
        if fingerprint is not None and not is_pending(value):
            self._put(obj, fingerprint, value)
        return value

    def replace(self, obj: Any, fingerprint: Hashable, value: Any) -> None:
        """Store ``value`` for ``obj`` (a partial result that became final)."""
        self._put(obj, fingerprint, value)

    @staticmethod
    def _run(active: Optional[budget.Budget], compute: Callable[[], Any]) -> Any:
        if active is None or active.abortable:
            return compute()
        active.abortable = True  # only this computation may be cut short, not the caller's
        try:
            return compute()
        finally:
            active.abortable = False

    def _put_off(self, obj: Any, fingerprint: Optional[Hashable], active: Optional[budget.Budget]) -> Dict[str, object]:
        """Defer, and remember it for this stop (epoch): later listings of the stop skip it."""
        if fingerprint is not None and active is not None and active.epoch is not None:
            with self._lock:
                if self._put_off_epoch is not active.epoch or len(self._put_off_ids) >= self.maxsize:
                    self._put_off_ids = {}
                    self._put_off_epoch = active.epoch
                try:
                    self._put_off_ids[id(obj)] = (weakref.ref(obj), fingerprint)
                except TypeError:
                    pass
        return self._defer(active)

    def _put_off_before(self, obj: Any, fingerprint: Optional[Hashable], epoch: Any) -> bool:
        if fingerprint is None or epoch is None:
            return False
        with self._lock:
            if self._put_off_epoch is not epoch:
                return False
            entry = self._put_off_ids.get(id(obj))
            return entry is not None and entry[0]() is obj and entry[1] == fingerprint

    def _defer(self, active: Any) -> Dict[str, object]:
        if active is not None:
            active.defer()
        self.deferred += 1
        return dict(PENDING)

    def peek(self, obj: Any, fingerprint: Optional[Hashable]) -> Any:
        """The cached value, or None; counts nothing and computes nothing."""
        if fingerprint is None:
            return None
        with self._lock:
            entry = self._entries.get(id(obj))
            if entry is not None and entry[0]() is obj and entry[1] == fingerprint:
                return entry[2]
        return None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _get(self, obj: Any, fingerprint: Hashable) -> Any:
        with self._lock:
            entry = self._entries.get(id(obj))
            if entry is not None and entry[0]() is obj and entry[1] == fingerprint:
                self._entries.move_to_end(id(obj))
                self.hits += 1
                return entry[2]
            self.misses += 1
            return _MISS

    def _put(self, obj: Any, fingerprint: Hashable, value: Any) -> None:
        key = id(obj)
        dead = self._dead

        def freed(_ref: Any) -> None:
            dead.append(key)

        try:
            ref = weakref.ref(obj, freed)
        except TypeError:
            return  # not weak-referenceable: never cache what we cannot check for identity
        size = entry_bytes(value)
        with self._lock:
            self._drop_dead()
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[3]
            self._entries[key] = (ref, fingerprint, value, size)
            self.bytes += size
            while self._entries and (len(self._entries) > self.maxsize or self.bytes > self.max_bytes):
                _, evicted = self._entries.popitem(last=False)
                self.bytes -= evicted[3]

    def _drop_dead(self) -> None:
        """Forget entries whose object was freed (the id may already be reused: check the ref)."""
        while self._dead:
            key = self._dead.popleft()
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is None:
                del self._entries[key]
                self.bytes -= entry[3]


# The one cache of per-tensor value statistics used by summaries and views.
VALUE_STATS = IdentityCache()
