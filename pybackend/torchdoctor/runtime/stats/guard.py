"""What every statistics pass runs inside: no warning reaches the user, and a thread count that
suits the machine's load.

Warnings: torch and numpy warn about things we do on purpose (reading a MaskedTensor's data, a
FakeTensor's ``data_ptr``, ``inf - inf`` in a block); the user's Debug Console must not see them.

Threads: each op of a pass is one parallel region. On a machine busier than its cores, a region
waits for its slowest thread, and one that was descheduled costs a whole time slice: measured
on 2 cores under load 5-9, the passes ran 2× to 10× slower with two threads than with one. So
the pass runs torch on one thread and shares its blocks among as many threads as there are cores
that OTHER processes leave idle (at least one; :mod:`parallel`), and restores the count.
Small tensors (:data:`PARALLEL_FROM`) leave the count alone: torch runs them on one thread.

What other processes do is read from ``/proc/stat`` between two passes (:mod:`cpu_use`: the load
average also counts tasks that use no CPU, and lags a minute); where that is unknown (the first
pass, another OS), from the 1-minute load average. The load average counts this process too: a
debuggee that trained until the breakpoint, or a bench that just ran, shows load ~1-2 while it
is paused and the cores are ours. Its own share is estimated by :class:`OwnLoad` from its CPU
time and taken off the load first (:func:`threads_for`), so an idle machine gives every core and
a machine loaded by others still gives fewer.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import time
import warnings
from typing import Any, Callable, Iterator, List, Optional

from .cpu_use import ForeignUse, process_cpu

# The load average's time constant: the kernel decays the 1-minute figure by exp(-5/60) every 5 s.
LOAD_WINDOW = 60.0


_IGNORE_ALL = ("ignore", None, Warning, None, 0)  # the entry ``warnings.simplefilter("ignore")`` makes


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Every warning ignored while the pass runs, and nothing else of the user's warnings changed.

    Not ``warnings.catch_warnings()``: entering and leaving it marks the filters as changed, and
    Python then forgets, in every module, which warnings were already shown, so a user's warning
    shown once per place (the "default" action) showed again after every summary. Our entry is put
    first in the same list and taken out again by itself: the filters read the same before and
    after (the registries stay valid), a ``-W error`` of the user's cannot fail our pass, and a
    filter added meanwhile (another thread) stays."""
    filters: List[Any] = warnings.filters  # type: ignore[assignment]  # typeshed says Sequence: it is the list
    filters.insert(0, _IGNORE_ALL)
    try:
        yield
    finally:
        for k, entry in enumerate(filters):
            if entry is _IGNORE_ALL:
                del filters[k]
                break


def threads_for(current: int, cores: int, load: float, own: float) -> int:
    """Threads out of ``current``: the cores left idle by the load that is not ours, >= 1."""
    foreign = max(0.0, load - max(0.0, own))
    return max(1, min(current, int(cores - foreign + 0.5)))


class OwnLoad:
    """This process's share of the 1-minute load average, from its CPU time.

    Each :meth:`sample` folds in the CPU time used since the last one as the kernel folds
    runnable threads into the load (exponential, :data:`LOAD_WINDOW`). How that time was spread
    over the interval is unknown, so it is taken as spent at its start, on ``cores`` threads:
    the smallest share it can have left in the load now. Underestimating our share only costs
    threads (the behaviour before the discount), never oversubscribes a machine others load.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = process_cpu,
        age: Optional[float] = None,
    ) -> None:
        """``age``: seconds since this process started, when known. Then the CPU time it used
        before we were imported (the stats are imported at the first summary, maybe after an hour
        of training) counts from that start; else only the CPU time from now on."""
        self.clock, self.cpu = clock, cpu
        self.wall, self.used = clock(), cpu()
        if age is not None and age > 0:
            self.wall, self.used = self.wall - age, 0.0
        self.level = 0.0

    def sample(self, cores: int) -> float:
        wall, used = self.clock(), self.cpu()
        elapsed, spent = wall - self.wall, max(0.0, used - self.used)
        if elapsed <= 0:
            return self.level
        rate = max(float(cores), spent / elapsed)  # busy threads during the burst
        burst = spent / rate
        gone = math.exp(-elapsed / LOAD_WINDOW)
        self.level = self.level * gone + rate * (math.exp(-(elapsed - burst) / LOAD_WINDOW) - gone)
        self.wall, self.used = wall, used
        return self.level


def process_age() -> Optional[float]:
    """Seconds since this process started (Linux ``/proc``), or None where unknown."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as uptime:
            up = float(uptime.read().split()[0])
        return up - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start, in clock ticks after boot
    except (OSError, ValueError, IndexError, AttributeError):
        return None


OWN = OwnLoad(age=process_age())  # the debuggee's CPU since it started counts as ours


USE = ForeignUse()  # what other processes did with the CPUs since the last pass (/proc/stat)


def idle_threads(current: int, own: Optional[OwnLoad] = None, use: Optional[ForeignUse] = None) -> int:
    """How many of ``current`` threads to use, >= 1: the cores other processes left idle since the
    last pass (:mod:`cpu_use`), else those the 1-minute load leaves idle once this process's own
    share is taken off."""
    cores = os.cpu_count() or current
    foreign = (use or USE).sample()
    if foreign is not None:
        return threads_for(current, cores, foreign, 0.0)
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return current
    return threads_for(current, cores, load, (own or OWN).sample(cores))


# Below this many elements torch runs an op on one thread anyway (its grain size is 32768):
# changing the count would cost more than the op.
PARALLEL_FROM = 1 << 16


def _single_threaded(t: Any) -> bool:
    try:
        return int(t.numel()) < PARALLEL_FROM
    except Exception:
        return False


# Block readers of the pass running now (:func:`block_workers`), set by :func:`cpu_threads`.
_WORKERS: "contextvars.ContextVar[int]" = contextvars.ContextVar("torchdoctor_block_workers", default=1)


# Whether the pass running now found every core idle of other processes' work (:func:`cpu_threads`):
# the float pass then takes blocks that an idle L3 keeps (:mod:`cpu_cache`).
_QUIET: "contextvars.ContextVar[bool]" = contextvars.ContextVar("torchdoctor_machine_quiet", default=False)


def machine_quiet() -> bool:
    """No other process used the CPUs when the pass running now began (False outside a pass)."""
    return _QUIET.get()


def block_workers(base: Any, limit: int) -> int:
    """How many threads the pass running now shares the blocks of ``limit`` elements of ``base``
    among (:mod:`parallel`): one off the CPU, and no more than there are blocks (starting a thread
    that finds no block costs ~0.1 ms)."""
    if base.device.type != "cpu":
        return 1
    return max(1, min(_WORKERS.get(), -(-base.numel() // limit)))


@contextlib.contextmanager
def intra_op_when_quiet(torch, workers: int) -> Iterator[int]:
    """Yield how many block readers the float pass starts for ``workers`` threads: all of them
    as readers while other processes load the CPUs, else one reader with torch on ``workers``
    intra-op threads.

    Why the difference: the readers' case against intra-op threads (:mod:`parallel`) is a
    descheduled thread stalling every parallel region, which needs other processes' work. On a
    quiet machine each op's region runs on free cores, and two readers cost more: two blocks'
    float32 work copies in the cache at once, and the GIL handed back and forth between their
    ~10 calls a block. ``bench/bench_summarize.py --size 1e8 --repeats 5``, wall clock against a
    two-thread ``aminmax``, two idle cores of a Zen 4 EPYC (load 0.7-0.9, torch 2.13, 2026-12-07),
    three interleaved pairs of runs, two readers -> one reader on two threads: float32 2.52-2.66x
    -> 2.43-2.49x, bfloat16 4.96-5.54x -> 4.61-4.72x, float16 4.69-4.85x -> 4.22-4.48x.
    Smaller blocks do not help either way: their ~10 calls a block cost more than the cache
    saves (bfloat16, one reader on two threads: 128 Ki values 8.9x, 1 Mi 4.6x)."""
    if workers <= 1 or not machine_quiet():
        yield workers
        return
    before = torch.get_num_threads()
    torch.set_num_threads(workers)
    try:
        yield 1
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def cpu_threads(torch, t: Any) -> Iterator[int]:
    """Run the block inside with torch on one intra-op thread when ``t`` is a big CPU tensor, and
    yield how many block readers it may use: :func:`idle_threads` of torch's count. Whether every
    core was free of other processes' work is kept for the pass (:func:`machine_quiet`).

    One intra-op thread, because a pass is hundreds of short ops and with several threads each op
    is a parallel region that waits for a descheduled thread on a busy machine (see
    :mod:`parallel`); the cores that load leaves idle read whole blocks each instead."""
    if getattr(getattr(t, "device", None), "type", None) != "cpu" or _single_threaded(t):
        yield 1
        return
    before = torch.get_num_threads()
    cores = os.cpu_count() or before
    free = idle_threads(cores)  # the cores others leave idle (one sample of their use)
    wanted = min(before, free)
    # one core: idle_threads gives it even to a loaded machine (at least one thread), so no telling
    token, quiet = _WORKERS.set(wanted), _QUIET.set(cores > 1 and free >= cores)
    try:
        if before == 1:
            yield wanted
            return
        torch.set_num_threads(1)
        try:
            yield wanted
        finally:
            torch.set_num_threads(before)
    finally:
        _WORKERS.reset(token)
        _QUIET.reset(quiet)
