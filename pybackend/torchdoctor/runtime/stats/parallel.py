"""Read a tensor's blocks on several threads without one barrier per op.

Each op of a pass on a 1 MiB block is short (50-500 µs). Run with torch's intra-op threads, every
op is a parallel region that waits for its slowest thread; on a machine busier than its cores one
of them is often descheduled, and the op then costs a time slice, and the waiting thread spins
meanwhile. Measured on 2 cores under load 5-6: every op on a 1 MiB block took ~20 ms of wall time
and ~8 ms of CPU with 2 threads against ~0.5 ms with one, and a whole 1e8-element float32 summary
took 1.2-3 s of CPU instead of 0.2 s (the "2 threads are slower than 1" of issue 15).

So the pass runs with torch on one intra-op thread (:func:`guard.cpu_threads`) and the blocks are
shared out instead: each of ``workers`` threads (this one included) takes the next block when it
is done with its last, with scratch buffers of its own. Threads meet once, at the end: a thread
that was descheduled only leaves more blocks to the others. torch ops release the GIL, so the
threads' reductions overlap; the Python between them is a few dozen µs a block.

The blocks come from one iterator, advanced under a lock, in the caller's context (the request's
budget: ``blocks.iter_blocks`` stops between blocks when it runs out); the first error of any
thread is raised here once all have stopped, and results come back in block order.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any, Callable, Dict, Iterable, Iterator, List, TypeVar

R = TypeVar("R")


def map_blocks(blocks: Iterable[Any], make_reader: Callable[[], Callable[[Any], R]], workers: int) -> List[R]:
    """``[reader(block) for block in blocks]``, on ``workers`` threads, each with its own reader
    (``make_reader()``: the thread's scratch buffers), in block order."""
    if workers <= 1:
        read = make_reader()
        return [read(block) for block in blocks]
    shared = _Shared(iter(blocks))
    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(shared.drain, make_reader), daemon=True)
        for _ in range(workers - 1)
    ]
    for thread in threads:
        thread.start()
    try:
        shared.drain(make_reader)  # this thread works too
    finally:
        for thread in threads:
            thread.join()
    if shared.errors:
        raise shared.errors[0]
    return [shared.results[i] for i in range(len(shared.results))]


class _Shared:
    """The numbered blocks every thread takes from, and what they found."""

    def __init__(self, blocks: Iterator[Any]) -> None:
        self.blocks = enumerate(blocks)
        self.lock = threading.Lock()
        self.results: Dict[int, Any] = {}
        self.errors: List[BaseException] = []

    def drain(self, make_reader: Callable[[], Callable[[Any], Any]]) -> None:
        try:
            read = make_reader()
            while not self.errors:
                with self.lock:
                    numbered = next(self.blocks, None)  # the iterator may raise: out of time
                if numbered is None:
                    return
                index, block = numbered
                self.results[index] = read(block)
        except BaseException as error:  # noqa: BLE001 - re-raised by map_blocks in the caller
            self.errors.append(error)
