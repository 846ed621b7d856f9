"""Work on a large document in a process of its own, so the language server keeps answering.

The server analyses documents in worker threads, but Python runs one thread at a time and
``ast.parse`` never lets go of the interpreter: while a 30,000-line file is parsed and walked, a
hover or a CodeLens on a small file waits for it (``bench/bench_lsp_responsiveness.py``). Above
``LARGE_DOCUMENT`` that work goes to a ``Child`` instead: one long-lived child process (started
with ``spawn``: it shares nothing with the server's threads; it runs at a lower priority and ends
as soon as the server ends, however the server ends: it waits on ``parent_process().sentinel``,
which works on Windows too), so the server's event loop only waits on a pipe.

One ``Child`` per kind of work (``lint/background.py`` lints; ``server/model_index.py`` looks for
model classes and data targets), so a CodeLens never queues behind a lint. The function given to
a child must be importable by name (a module-level function); it runs in the child with the
arguments pickled.

Deadline: ``Child.run`` answers within ``Child.deadline`` seconds of submitting the work (``DEADLINE_SECONDS``,
30 s, by default; a 1 MB file takes a few seconds), else the child is killed and the caller gets
a ``ChildTimedOut`` whose text is the note to show ("analysing this file took longer than 30 s:
..."): a pathological text cannot hold the child, and every later large document with it, forever.
Work queued behind the killed call (its own time is up too, or its child is gone) is sent once
more to a new child.

Failures: a child that cannot be started is a ``ChildUnavailable`` (``run`` then does the work in
a thread of this process); a child that stops before answering (a crash of the parser, killed
for memory) is a ``ChildStopped``, and the next call starts a new child. The text of both
``ChildStopped`` and ``ChildTimedOut`` is a note for the user. Exceptions the function raises come
back as themselves.

Exit: the server never waits for a busy child: ``stop_all`` kills every child. The server calls it
as it stops (``server/__main__.py``), and it runs again as the interpreter shuts down, before
``concurrent.futures``' own exit handler, which would wait for the work a child is doing.

Standard library only: used by the server and by ``lint``.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import logging
import multiprocessing
import multiprocessing.connection
import os
import subprocess
import sys
import threading
import time
import weakref
from typing import Any, Callable, List, Optional, Tuple, TypeVar

log = logging.getLogger(__name__)

LARGE_DOCUMENT = 256 * 1024  # characters (~8,000 lines): the work is felt by other requests
# Python 3.9 and 3.10's parser does not guard its C stack: ~100,000 levels of `a+a+...` or
# `f()()...` (200,000 characters, two a level) crash the process where 3.11+ raise RecursionError
# (measured: 90,000 levels parse, 120,000 crash, 3.9.18 and 3.10.13). There a text that long goes
# to the child, where a crash is a note (STOPPED), not the end of the language server.
if sys.version_info < (3, 11):
    LARGE_DOCUMENT = 128 * 1024
NICENESS = 5  # the child yields the CPU to the server (and its small-file requests) on a busy machine
DEADLINE_SECONDS = 30.0  # the longest one call may take (from its submission) before the child is killed
PARENT_POLL_SECONDS = 1.0  # only where a child cannot get its parent's sentinel: how often it checks
STOPPED = (
    "cannot analyse this file: the process analysing it stopped before answering "
    "(out of memory, or a crash of the parser)"
)

# What a file :func:`parser_crashes` on is told (the lint CLI and the checks CLI say the same).
NESTED_TOO_DEEPLY = "an expression or statement is nested too deeply for this Python's parser"

T = TypeVar("T")


def parser_crashes(text: str) -> bool:
    """Whether ``ast.parse(text)`` would crash the process (SIGSEGV): for the CLIs, which parse in
    their own process (the server sends such texts to a ``Child``). Only Python < 3.11 and a text
    over ``LARGE_DOCUMENT`` (two characters a level, so shorter texts stay below the crash); there
    the parse is tried in a child interpreter, and a child ended by a signal is the answer.
    ``torchdoctor lint`` and ``torchdoctor check`` on a 150,000-term sum died with exit 139 and no
    word on 3.9.18 and 3.10.13."""
    if sys.version_info >= (3, 11) or len(text) <= LARGE_DOCUMENT:
        return False
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                "import ast, sys; ast.parse(sys.stdin.buffer.read().decode('utf-8', 'surrogatepass'))",
            ],
            input=text.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=DEADLINE_SECONDS,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode < 0


class ChildUnavailable(RuntimeError):
    """The child process could not be started."""


class ChildStopped(RuntimeError):
    """The child process stopped (crashed, or was killed) before it answered; the text is a note."""


class ChildTimedOut(ChildStopped):
    """The child did not answer within its deadline and was killed; the text is a note."""


_CHILDREN: "weakref.WeakSet[Child]" = weakref.WeakSet()  # for stop_all


class Child:
    """One long-lived child process for one kind of work (see the module docstring)."""

    def __init__(self, name: str, deadline: float = DEADLINE_SECONDS) -> None:
        self.name = name
        self.deadline = deadline
        self._lock = threading.Lock()
        self._pool: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._killed: "weakref.WeakSet[concurrent.futures.ProcessPoolExecutor]" = weakref.WeakSet()
        _CHILDREN.add(self)

    def submit(self, fn: Callable[..., T], *args: Any) -> "concurrent.futures.Future[T]":
        """Start ``fn(*args)`` in the child; its future fails with ``BrokenProcessPool`` if the child dies.

        No deadline (the caller waits as it likes). A child found dead (killed while idle) is
        replaced once; ``ChildUnavailable`` if no child starts."""
        return self._submit(fn, *args)[1]

    async def run(self, fn: Callable[..., T], *args: Any, here: Optional[Callable[[], T]] = None) -> T:
        """``fn(*args)`` in the child, awaited without holding the event loop.

        ``ChildStopped`` when the child dies before answering, ``ChildTimedOut`` past the deadline;
        when no child can be started, ``here()`` (by default ``fn(*args)``) runs in a worker thread
        of this process instead. Cancelling the caller drops the work if the child has not started
        it yet."""
        import asyncio  # the server's loop has it; the CLIs (lint's parser_crashes) need not load it

        for retry in (True, False):
            try:
                pool, future = self._submit(fn, *args)
            except ChildUnavailable as exc:
                log.warning("%s; working in the server process", exc)
                work = here if here is not None else (lambda: fn(*args))
                return await asyncio.get_running_loop().run_in_executor(None, work)
            waiting = asyncio.wrap_future(future)
            try:
                done, _ = await asyncio.wait({waiting}, timeout=self.deadline)
            except asyncio.CancelledError:
                waiting.cancel()
                raise
            if not done:
                waiting.cancel()
                if retry and pool in self._killed:
                    continue
                raise self._expired(pool)
            try:
                return waiting.result()
            except concurrent.futures.process.BrokenProcessPool as exc:
                if not (retry and pool in self._killed):
                    raise self._stopped(pool, exc) from exc
        raise AssertionError("unreachable")

    def reset(self) -> None:
        """Kill the child, busy or not; the next call starts a new one."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            self._kill(pool)

    def pid(self) -> Optional[int]:
        """The child's process id, None while none runs (for tests and logs)."""
        processes = _processes(self._pool)
        return processes[0].pid if processes else None

    # -- internals ----------------------------------------------------------------------------

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._pool is not None and _any_dead(self._pool):
                dead, self._pool = self._pool, None  # killed while idle, not yet noticed by the pool
                dead.shutdown(wait=False, cancel_futures=True)
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

    def _kill(self, pool: concurrent.futures.ProcessPoolExecutor) -> None:
        """Kill ``pool``'s child now (``shutdown`` alone waits for the call it is working on)."""
        self._killed.add(pool)
        for process in _processes(pool):
            try:
                process.kill()
            except (OSError, ValueError):  # already gone, or already closed
                pass
        # work queued behind the killed call may still be going down the dead child's pipe; Python
        # 3.9's pool joined that writing thread, which never ends, and the process then never exited
        queue = getattr(pool, "_call_queue", None)  # private, in every version 3.9-3.13
        if queue is not None:
            queue.cancel_join_thread()
        pool.shutdown(wait=False, cancel_futures=True)

    def _stopped(self, pool: concurrent.futures.ProcessPoolExecutor, exc: BaseException) -> ChildStopped:
        log.warning("the %s process stopped before answering (%s); the next call starts a new one", self.name, exc)
        self._discard(pool)
        return ChildStopped(STOPPED)

    def _expired(self, pool: concurrent.futures.ProcessPoolExecutor) -> ChildTimedOut:
        log.warning(
            "the %s process took longer than %g s: killed; the next call starts a new one", self.name, self.deadline
        )
        with self._lock:
            if self._pool is pool:
                self._pool = None
        self._kill(pool)
        return ChildTimedOut(
            f"analysing this file took longer than {self.deadline:g} s: stopped, so that the other files "
            "stay fast; it is analysed again after the next edit"
        )


def stop_all() -> None:
    """Kill every child now, busy or not: the server is exiting and must not wait for one."""
    for child in list(_CHILDREN):
        child.reset()


def _processes(pool: Optional[concurrent.futures.ProcessPoolExecutor]) -> List[Any]:
    """The pool's worker processes (no public API lists them before Python 3.14)."""
    return list((getattr(pool, "_processes", None) or {}).values()) if pool is not None else []


def _any_dead(pool: concurrent.futures.ProcessPoolExecutor) -> bool:
    """Whether one of the pool's children has exited (its sentinel is ready), without reaping it."""
    try:
        sentinels = [p.sentinel for p in _processes(pool)]
        return bool(sentinels) and bool(multiprocessing.connection.wait(sentinels, timeout=0))
    except (OSError, ValueError):  # closed meanwhile: dead
        return True


# Before concurrent.futures' own exit handler (registered when it was imported, and these run in
# reverse order), which waits for the work a child is doing: stop the children first.
getattr(threading, "_register_atexit", lambda f: None)(stop_all)


def _child_started(parent: int) -> None:
    """Runs first in each child: yield the CPU to the server, and die with it."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # not on this platform, or not allowed: run at the same priority
        pass
    threading.Thread(target=_watch_parent, args=(parent,), name="torchdoctor-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    """A server that dies (even by SIGKILL) leaves no child behind: the child would otherwise wait
    for work forever (it holds its own end of the work queue's pipe, so it never sees end of file).

    The parent's sentinel (a pipe on POSIX, the process handle on Windows) is ready once the parent
    has gone; the parent's id is no signal on Windows, where it never changes."""
    process = multiprocessing.parent_process()
    if process is not None:
        try:
            multiprocessing.connection.wait([process.sentinel])
        except (OSError, ValueError):  # not a waitable sentinel here: look at the parent's id instead
            _wait_for_new_parent_id(parent)
    else:
        _wait_for_new_parent_id(parent)
    os._exit(0)


def _wait_for_new_parent_id(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
