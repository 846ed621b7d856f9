"""How often the collection may reduce tensors: a time budget, as a token bucket.

Exact statistics of every module output and gradient at every step would cost more than the step
itself on small models. So the reductions run on a pass (or a backward) only when the time they
took so far stays under ``fraction`` of the wall time: credit grows by ``fraction`` x elapsed
time, up to ``capacity`` seconds, and each sampled pass spends what its reductions took. Credit
accrues from the start (building the model and loading data usually earn the first pass its
reductions) and only while the collection is attached. A program paused in the debugger earns
full credit meanwhile, so when stepping from stop to stop every pass is sampled; in a
free-running loop the passes sampled are spread evenly, at the cost asked for.
"""

from __future__ import annotations

import time

DEFAULT_FRACTION = 0.03
DEFAULT_CAPACITY = 0.02  # seconds of reductions that may be spent in a burst (after a pause)


class TimeBudget:
    def __init__(
        self, fraction: float = DEFAULT_FRACTION, capacity: float = DEFAULT_CAPACITY, clock=time.perf_counter
    ) -> None:
        self.fraction = max(0.0, float(fraction))
        self.capacity = max(0.0, float(capacity))
        self.clock = clock
        self.credit = 0.0
        self.last = clock()
        self.spent = 0.0  # seconds of reductions in total
        self.granted = 0
        self.refused = 0

    def allow(self) -> bool:
        """May the next pass (or backward) be reduced?"""
        now = self.clock()
        self.credit = min(self.capacity, self.credit + (now - self.last) * self.fraction)
        self.last = now
        if self.credit > 0.0:
            self.granted += 1
            return True
        self.refused += 1
        return False

    def restart(self) -> None:
        """Earn nothing for the time until now (the collection was detached)."""
        self.last = self.clock()

    def spend(self, seconds: float) -> None:
        self.credit -= seconds
        self.spent += seconds
