"""The state a draw of the user's data shares with the thread waiting for it (``stuck.py``): whether
the draw was given up on, and how long each call of the user's code took (``sampling.py`` ticks it
before each sample or batch)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional


class Abandoned(BaseException):  # not Exception: the loader's error handling must let it through
    """Raised in a draw's thread once the check gave up waiting for it (stuck.py): stop quietly."""


class Guard:
    """Shared by a draw's thread and the thread waiting for it. The draw changes its ``Draws`` only
    inside ``with guard:``; once ``abandon()`` returned, it never does again (``Abandoned``)."""

    # slots: ``tick`` runs once per sample beside the user's ``__getitem__``, where each attribute of
    # an instance dict read or written cost more than in a loop of its own (cold caches)
    __slots__ = (
        "lock",
        "abandoned",
        "draws",
        "item_started",
        "items",
        "batches",
        "slowest",
        "per_sample",
        "batch_size",
        "_sample",
        "pending",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.abandoned = False
        self.draws: Any = None  # the Draws it guards (sampling.py)
        # progress, for the waiting thread (stuck.py): when the current call of the user's code began,
        # the slowest call seen, the slowest single sample, and the loader's batch size
        self.item_started = time.perf_counter()
        self.items = 0
        self.batches = 0
        self.slowest = 0.0
        self.per_sample = 0.0
        self.batch_size = 1
        self._sample = True
        # the samples the draw holds and has not added to ``draws`` yet (_draw_each), taken on giving up
        self.pending: Optional[Callable[[], None]] = None

    def tick(self, sample: bool, now: Optional[float] = None) -> None:
        """Before each call of the user's code (a sample, or a loader's next batch): ``Abandoned`` once
        given up on (no more of the user's code is called); else the previous call is timed (``now``:
        the caller's ``perf_counter()``, read just before)."""
        if self.abandoned:
            raise Abandoned()
        if now is None:
            now = time.perf_counter()
        if self.items:
            took = now - self.item_started
            if took > self.slowest:
                self.slowest = took
            if not self._sample:
                self.batches += 1
            elif took > self.per_sample:
                self.per_sample = took
        self.items += 1
        self.item_started = now
        self._sample = sample

    def __enter__(self) -> None:
        self.lock.acquire()
        if self.abandoned:
            self.lock.release()
            raise Abandoned()

    def __exit__(self, *exc: Any) -> None:
        self.lock.release()

    def take_pending(self) -> None:
        """Under ``lock``, before giving up: what the draw holds goes into ``draws``, so what was drawn
        is all there while the draw adds samples a row at a time."""
        pending, self.pending = self.pending, None
        if pending is not None and not self.abandoned:
            pending()

    def abandon(self) -> None:
        with self.lock:
            self.take_pending()
            self.abandoned = True
