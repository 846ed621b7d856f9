"""Work on a large document in a process of its own, so the language server keeps answering.

The server analyses documents in worker threads, but Python runs one thread at a time and
``ast.parse`` never lets go of the interpreter: while a 30,000-line file is parsed and walked, a
hover or a CodeLens on a small file waits for it (``bench/bench_lsp_responsiveness.py``). Above
``LARGE_DOCUMENT`` that work goes to a ``Child`` instead: one long-lived child process (started
with ``spawn``: it shares nothing with the server's threads; it runs at a lower priority and ends
within a second of the server, however the server ends), so the server's event loop only waits on
a pipe.

One ``Child`` per kind of work (``lint/background.py`` lints; ``server/model_index.py`` looks for
model classes and data targets), so a CodeLens never queues behind a lint. The function given to
a child must be importable by name (a module-level function); it runs in the child with the
arguments pickled.

Failures: a child that cannot be started is a ``ChildUnavailable`` (the caller does the work in
its own process, as before); a child that stops before answering (a crash of the parser, killed
for memory) is a ``ChildStopped``, and the next call starts a new child. Exceptions the function
raises come back as themselves.

Standard library only: used by the server and by ``lint``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import logging
import multiprocessing
import os
import threading
import time
from typing import Any, Callable, Optional, Tuple, TypeVar

log = logging.getLogger(__name__)

LARGE_DOCUMENT = 256 * 1024  # characters (~8,000 lines): the work is felt by other requests
NICENESS = 5  # the child yields the CPU to the server (and its small-file requests) on a busy machine
PARENT_POLL_SECONDS = 1.0  # how soon a child notices that the server has gone

T = TypeVar("T")


class ChildUnavailable(RuntimeError):
    """The child process could not be started."""


class ChildStopped(RuntimeError):
    """The child process stopped (crashed, or was killed) before it answered."""


class Child:
    """One long-lived child process for one kind of work (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._pool: Optional[concurrent.futures.ProcessPoolExecutor] = None

    def submit(self, fn: Callable[..., T], *args: Any) -> "concurrent.futures.Future[T]":
        """Start ``fn(*args)`` in the child; its future fails with ``BrokenProcessPool`` if the child dies.

        A child found dead (killed while idle) is replaced once; ``ChildUnavailable`` if no child starts."""
        return self._submit(fn, *args)[1]

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the child, waited for in this thread; ``ChildStopped`` / ``ChildUnavailable``."""
        pool, future = self._submit(fn, *args)
        try:
            return future.result()
        except concurrent.futures.process.BrokenProcessPool as exc:
            raise self._stopped(pool, exc) from exc

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the child, awaited without holding the event loop.

        ``ChildStopped`` when the child dies before answering; when no child can be started, ``fn``
        runs in a worker thread of this process instead. Cancelling the caller drops the work if
        the child has not started it yet."""
        try:
            pool, future = self._submit(fn, *args)
        except ChildUnavailable as exc:
            log.warning("%s; working in the server process", exc)
            return await asyncio.get_running_loop().run_in_executor(None, fn, *args)
        try:
            return await asyncio.wrap_future(future)
        except concurrent.futures.process.BrokenProcessPool as exc:
            raise self._stopped(pool, exc) from exc

    def reset(self) -> None:
        """Forget the child (stopping it once its queue is done); the next call starts a new one."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def pid(self) -> Optional[int]:
        """The child's process id, None while none runs (for tests and logs)."""
        pool = self._pool
        processes = list((getattr(pool, "_processes", None) or {}).values()) if pool is not None else []
        return processes[0].pid if processes else None

    # -- internals ----------------------------------------------------------------------------

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_child_started,
                    initargs=(os.getpid(),),
                )
            return self._pool

    def _submit(
        self, fn: Callable[..., T], *args: Any
    ) -> Tuple[concurrent.futures.ProcessPoolExecutor, "concurrent.futures.Future[T]"]:
        for _ in range(2):
            pool = self._executor()
            try:
                return pool, pool.submit(fn, *args)
            except concurrent.futures.process.BrokenProcessPool:
                self._discard(pool)  # died while idle: once more with a new child
            except (OSError, RuntimeError) as exc:
                self._discard(pool)
                raise ChildUnavailable(f"cannot start the {self.name} process: {exc!r}") from exc
        raise ChildUnavailable(f"the {self.name} process dies as it starts")

    def _discard(self, pool: concurrent.futures.ProcessPoolExecutor) -> None:
        """Forget ``pool`` if it is still the current one (another caller may have replaced it)."""
        with self._lock:
            if self._pool is not pool:
                return
            self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def _stopped(self, pool: concurrent.futures.ProcessPoolExecutor, exc: BaseException) -> ChildStopped:
        log.warning("the %s process stopped before answering (%s); the next call starts a new one", self.name, exc)
        self._discard(pool)
        return ChildStopped(f"the {self.name} process stopped before it answered")


def _child_started(parent: int) -> None:
    """Runs first in each child: yield the CPU to the server, and die with it."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # not on this platform, or not allowed: run at the same priority
        pass
    threading.Thread(target=_watch_parent, args=(parent,), name="torchdoctor-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    """A server that dies (even by SIGKILL) leaves no child behind: the child would otherwise wait
    for work forever (it holds its own end of the work queue's pipe, so it never sees end of file)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(0)
