"""The worker's side of job control: die with the backend, stay within memory, sign the result.

Runs first thing in the worker (the user's interpreter; stdlib only), before torch or the
user's code is imported. ``jobs.py`` passes, in the environment:

- ``CONTROL_FD``: the read end of a pipe whose only write end the backend holds. The backend
  writes this run's nonce on it, one line, and then nothing: when the backend dies (even by
  SIGKILL) the pipe reaches end of file and a watchdog thread kills the worker's process group
  and the processes it started. Portable to every POSIX system.
- ``PARENT_PID``: the backend's pid. On Linux ``PR_SET_PDEATHSIG`` (through ``ctypes``) makes
  the kernel send the worker SIGTERM when the backend exits, as a second path beside the thread;
  our SIGTERM handler kills the run's processes the same way. (Not SIGKILL: that would kill the
  worker before the thread could take the worker's own children down, and they would be orphans.)
  The pid catches a backend that died before the call.
- ``MEMORY_LIMIT_MB``: the worker's data-segment limit (``RLIMIT_DATA``: heap and anonymous
  mappings, what tensors use; unlike ``RLIMIT_AS`` it does not count the address space CUDA
  reserves and never touches). An allocation over it raises ``MemoryError`` (Python) or torch's
  "can't allocate memory", which the worker reports with the limit named.

The nonce goes on the result line (``{"event": "result", "nonce": ...}``): user code can write
to any descriptor, but it cannot know the nonce, so it cannot forge a result.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Optional

CONTROL_FD = "TORCHDOCTOR_CONTROL_FD"
PARENT_PID = "TORCHDOCTOR_PARENT_PID"
MEMORY_LIMIT_MB = "TORCHDOCTOR_MEMORY_LIMIT_MB"
NONCE = "TORCHDOCTOR_RESULT_NONCE"  # where there is no control pipe (Windows): the nonce itself
_PR_SET_PDEATHSIG = 1

memory_limit_mb: Optional[int] = None  # what was set, for the out-of-memory message


def install() -> Optional[str]:
    """Set everything up; the run's nonce (None when not started by ``jobs.py``)."""
    parent = _pop_int(PARENT_PID)
    _set_pdeathsig()
    if parent is not None and os.name == "posix" and os.getppid() != parent:
        os._exit(1)  # the backend died before the death signal was armed: nobody wants this run
    _limit_memory(_pop_int(MEMORY_LIMIT_MB))
    fd = _pop_int(CONTROL_FD)
    if fd is None:
        return os.environ.pop(NONCE, None)
    nonce = _read_line(fd)
    from . import process_tree  # noqa: F401 - imported now, not inside a signal handler mid-import

    threading.Thread(target=_watch, args=(fd,), name="torchdoctor-parent-watch", daemon=True).start()
    return nonce


def _pop_int(name: str) -> Optional[int]:
    value = os.environ.pop(name, None)  # user code has no business seeing these
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _set_pdeathsig() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        worker = os.getpid()
        signal.signal(signal.SIGTERM, lambda signum, frame: _on_sigterm(worker))
        # forked children (DataLoader workers, Pool processes) get SIGTERM from their parent as an
        # ordinary stop: there it must keep its default meaning, not take the whole run down
        os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError, ValueError):
        pass  # no prctl: the watchdog thread still works


def _on_sigterm(worker: int) -> None:
    if os.getpid() != worker:  # a fork that kept our handler: stop as SIGTERM would
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    _die()


def _limit_memory(megabytes: Optional[int]) -> None:
    global memory_limit_mb
    if not megabytes or megabytes <= 0:
        return
    try:
        import resource
    except ImportError:  # Windows
        return
    which = getattr(resource, "RLIMIT_DATA", None) if sys.platform.startswith("linux") else None
    if which is None:
        which = getattr(resource, "RLIMIT_AS", None)
    if which is None:
        return
    wanted = megabytes * 1024 * 1024
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(which, (wanted, hard))
        memory_limit_mb = wanted // (1024 * 1024)
    except (ValueError, OSError):
        pass


def _read_line(fd: int) -> str:
    data = b""
    while not data.endswith(b"\n") and len(data) < 256:
        chunk = os.read(fd, 256 - len(data))
        if not chunk:
            break
        data += chunk
    return data.decode("ascii", "replace").strip()


def _watch(fd: int) -> None:
    """Block until the backend's end of the pipe closes, then take the whole run down."""
    try:
        while os.read(fd, 4096):
            pass
    except OSError:
        pass
    _die()


def _die() -> None:
    """SIGKILL what this run started (descendants, marked processes), then the group, then us."""
    if os.name == "posix":
        try:
            from .process_tree import JOB_MARKER, descendants, marked

            job = os.environ.get(JOB_MARKER)
            for pid in descendants(os.getpid()) + (marked(job) if job else []):
                if pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            os.killpg(os.getpgrp(), signal.SIGKILL)
        except Exception:  # noqa: BLE001 - whatever happens, this process ends below
            pass
    os._exit(1)
