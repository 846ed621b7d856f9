"""What every statistics pass runs inside: no warning reaches the user, and a thread count that
suits the machine's load.

Warnings: torch and numpy warn about things we do on purpose (reading a MaskedTensor's data, a
FakeTensor's ``data_ptr``, ``inf - inf`` in a block); the user's Debug Console must not see them.

Threads: each op of a pass is one parallel region. On a machine busier than its cores, a region
waits for its slowest thread, and one that was descheduled costs a whole time slice: measured
on 2 cores under load 9, the passes ran 2× slower with two threads than with one. So the pass
uses only the cores that the load average leaves idle (at least one), and restores the count.
Small tensors (:data:`PARALLEL_FROM`) leave the count alone: torch runs them on one thread.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any, Iterator


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def idle_threads(current: int) -> int:
    """How many of ``current`` threads to use: the cores the 1-minute load leaves idle, >= 1."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return current
    cores = os.cpu_count() or current
    return max(1, min(current, int(cores - load + 0.5)))


# Below this many elements torch runs an op on one thread anyway (its grain size is 32768):
# changing the count would cost more than the op.
PARALLEL_FROM = 1 << 16


def _single_threaded(t: Any) -> bool:
    try:
        return int(t.numel()) < PARALLEL_FROM
    except Exception:
        return False


@contextlib.contextmanager
def cpu_threads(torch, t: Any) -> Iterator[None]:
    """Run the block inside with :func:`idle_threads` intra-op threads when ``t`` is on the CPU."""
    if getattr(getattr(t, "device", None), "type", None) != "cpu" or _single_threaded(t):
        yield
        return
    before = torch.get_num_threads()
    wanted = idle_threads(before)
    if wanted == before:
        yield
        return
    torch.set_num_threads(wanted)
    try:
        yield
    finally:
        torch.set_num_threads(before)
