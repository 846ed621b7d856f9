"""A small, bounded memo keyed by object identity and a fingerprint (version, layout, probe).

The debugger asks for the same tensors at every stop; a hit must cost nothing. Entries hold a
weak reference, so a cached tensor can still be freed, and a recycled ``id()`` can never return
another object's statistics. Thread-safe: pydevd may resolve variables from several threads.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Hashable, Optional

_MISS = object()


class IdentityCache:
    """LRU of ``id(obj) -> (weakref, fingerprint, value)`` with hit/miss counters."""

    def __init__(self, maxsize: int = 512) -> None:
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: "OrderedDict[int, tuple]" = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, obj: Any, fingerprint: Optional[Hashable], compute: Callable[[], Any]) -> Any:
        """``compute()`` unless ``obj`` was seen with the same fingerprint; None disables caching."""
        if fingerprint is None:
            return compute()
        value = self._get(obj, fingerprint)
        if value is not _MISS:
            return value
        value = compute()
        self._put(obj, fingerprint, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

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
        try:
            ref = weakref.ref(obj)
        except TypeError:
            return  # not weak-referenceable: never cache what we cannot check for identity
        with self._lock:
            self._entries[id(obj)] = (ref, fingerprint, value)
            self._entries.move_to_end(id(obj))
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)


# The one cache of per-tensor value statistics used by summaries and views.
VALUE_STATS = IdentityCache()
