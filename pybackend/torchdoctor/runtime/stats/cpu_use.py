"""How many cores OTHER processes kept busy lately, read from ``/proc/stat`` (Linux).

The 1-minute load average (:mod:`guard`'s fallback) counts tasks that use no CPU at all: those
in uninterruptible sleep (NFS, a VM's block device) and, on some virtual machines, a steady ~0.5
while every core is idle (measured on the 2-core EPYC of our CI: load 0.5, ``vmstat`` 100% idle,
``/proc/pressure/cpu`` 0). It also lags a minute behind a process that just stopped or started.
Taken as busy cores, that phantom half core made every summary run on one thread of two.

``/proc/stat`` says what the CPUs actually did: the busy time of every core (user, nice, system,
irq, softirq, and steal: time the hypervisor gave another guest) between two samples, less this
process's own CPU time over the same interval, is the work of others, in cores. One sample is
taken per summary pass; the window is the time since the last one, so in a debugger it covers
the run up to this stop. A window shorter than :data:`MIN_WINDOW` is too coarse (the counters
tick at 100 Hz) and keeps the last figure; one longer than :data:`MAX_WINDOW` says little about
now, and gives no figure (the caller falls back to the load average).
"""

from __future__ import annotations

import os
import time
from typing import Callable, Optional, Tuple

MIN_WINDOW = 0.25  # seconds: at 100 ticks a second, ~2 ticks of error is < 0.1 core on 2 cores
MAX_WINDOW = 60.0  # seconds: the load average's own horizon

# Fields of the aggregate ``cpu`` line: user nice system idle iowait irq softirq steal guest
# guest_nice. Busy: all but idle and iowait (guest time is already inside user and nice).
_BUSY = (0, 1, 2, 5, 6, 7)


def read_busy(path: str = "/proc/stat") -> Optional[float]:
    """Seconds of CPU time all cores spent busy since boot, or None where unknown."""
    try:
        with open(path) as stat:
            first = stat.readline().split()
        if not first or first[0] != "cpu":
            return None
        ticks = [int(v) for v in first[1:]]
        return sum(ticks[i] for i in _BUSY if i < len(ticks)) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None


def process_cpu() -> float:
    """CPU seconds of this process, every thread (user + system)."""
    times = os.times()
    return times.user + times.system


class ForeignUse:
    """The busy cores of other processes over the window since the last :meth:`sample`."""

    def __init__(
        self,
        busy: Callable[[], Optional[float]] = read_busy,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = process_cpu,
    ) -> None:
        self.busy, self.clock, self.cpu = busy, clock, cpu
        self.origin = self._now()
        self.cores: Optional[float] = None  # the last window's figure

    def _now(self) -> Optional[Tuple[float, float, float]]:
        busy = self.busy()
        return None if busy is None else (self.clock(), busy, self.cpu())

    def sample(self) -> Optional[float]:
        """Cores kept busy by others (>= 0), or None when unknown (no ``/proc/stat``, the first
        window not yet long enough, or the last sample too long ago)."""
        now = self._now()
        if now is None or self.origin is None:
            self.origin, self.cores = now, None
            return None
        wall = now[0] - self.origin[0]
        if wall < MIN_WINDOW:
            return self.cores
        others = (now[1] - self.origin[1]) - (now[2] - self.origin[2])
        self.cores = max(0.0, others / wall) if wall <= MAX_WINDOW else None
        self.origin = now
        return self.cores
