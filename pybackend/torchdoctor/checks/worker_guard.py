"""The worker's side of job control: die with the backend, stay within memory, sign the result.

Runs first thing in the worker (the user's interpreter; stdlib only), before torch or the
user's code is imported. ``jobs.py`` passes, in the environment:

- ``CONTROL_FD``: the read end of a pipe whose only write end the backend holds. The backend
  writes this run's nonce on it, one line, and then nothing: when the backend dies (even by
  SIGKILL) the pipe reaches end of file and a watchdog kills the worker's process group and the
  processes it started. Portable to every POSIX system. The watchdog is a process forked here,
  before the user's code runs, that holds nothing of the worker's but this pipe: a thread of the
  worker (also started, as a fallback where ``fork`` fails) cannot run while the user's code holds
  the GIL in one long C call (``sum(range(10**15))``, a regex, a C extension's loop), and neither
  can a Python signal handler. The watchdog ends with the worker (``PR_SET_PDEATHSIG`` on Linux,
  a parent check every second elsewhere).
- ``PARENT_PID``: the backend's pid. On Linux ``PR_SET_PDEATHSIG`` (through ``ctypes``) makes
  the kernel send the worker SIGTERM when the backend exits, as a second path beside the thread;
  our SIGTERM handler kills the run's processes the same way. (Not SIGKILL: that would kill the
  worker before the thread could take the worker's own children down, and they would be orphans.)
  The pid catches a backend that died before the call.
- ``MEMORY_LIMIT_MB``: the worker's data-segment limit (``RLIMIT_DATA``: heap and anonymous
  writable mappings, what tensors use; unlike ``RLIMIT_AS`` it does not count the address space
  CUDA reserves with ``PROT_NONE`` and never touches). An allocation over it raises
  ``MemoryError`` (Python) or torch's "can't allocate memory", which the worker reports with the
  limit named. ``limit_kind`` decides: ``RLIMIT_AS`` counts every reservation, so it is used only
  where there is no ``RLIMIT_DATA`` worth the name (not Linux, or a Linux older than 4.7, where
  ``RLIMIT_DATA`` counted only ``brk``) and no NVIDIA device is present; else no limit is set.

The nonce goes on the result line (``{"event": "result", "nonce": ...}``): user code can write
to any descriptor, but it cannot know the nonce, so it cannot forge a result.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from typing import Optional, Tuple

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

    _start_watchdog(fd)
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
    kind = limit_kind(sys.platform, os.uname().release if hasattr(os, "uname") else "", nvidia_present())
    which = getattr(resource, kind, None) if kind else None
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


def limit_kind(platform: str, kernel_release: str, nvidia: bool) -> Optional[str]:
    """Which ``resource`` limit bounds the worker's memory here: ``RLIMIT_DATA``, ``RLIMIT_AS`` or None.

    ``RLIMIT_DATA`` counts private writable mappings on Linux 4.7 and later: the heap and what
    tensors use, not CUDA's reservations. ``RLIMIT_AS`` counts the whole address space: CUDA
    reserves far more than any limit (its context fails to start), so it is never set beside an
    NVIDIA device; without one it is the best there is (macOS, old Linux).
    """
    if platform.startswith("linux") and _kernel_version(kernel_release) >= (4, 7):
        return "RLIMIT_DATA"
    return None if nvidia else "RLIMIT_AS"


def _kernel_version(release: str) -> Tuple[int, int]:
    parts = (release.split("-", 1)[0].split(".") + ["0", "0"])[:2]
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except ValueError:
        return (0, 0)


def nvidia_present() -> bool:
    """An NVIDIA driver or device on this machine (checked without CUDA, which would poison fork)."""
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia"))


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


def _start_watchdog(fd: int) -> None:
    """Fork the watchdog process (see the module's docstring); the worker carries on at once."""
    if os.name != "posix" or not hasattr(os, "fork"):
        return
    worker = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return  # the thread still watches
    if pid == 0:
        try:
            _watchdog(fd, worker)
        finally:
            os._exit(0)


def _watchdog(fd: int, worker: int) -> None:
    """In the watchdog: keep only the control pipe; on its end of file take the run down."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)  # the backend waits for the end of the worker's pipes: hold none
    for other in _open_fds():
        if other not in (0, 1, 2, fd):
            try:
                os.close(other)
            except OSError:
                pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError, ValueError):
            pass
    while os.getppid() == worker:  # else the worker has ended: nothing left to guard
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready and not os.read(fd, 4096):
            _kill_run(worker)  # the backend is gone
            return


def _open_fds() -> list:
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            return [int(n) for n in os.listdir(listing)]
        except (OSError, ValueError):
            continue
    return list(range(3, 256))


def _die() -> None:
    """SIGKILL what this run started (descendants, marked processes), then the group, then us."""
    _kill_run(os.getpid())
    os._exit(1)


def _kill_run(worker: int) -> None:
    """SIGKILL the worker's descendants, the job's marked processes, the worker, then its group."""
    if os.name != "posix":
        return
    try:
        from .process_tree import JOB_MARKER, descendants, marked

        job = os.environ.get(JOB_MARKER)
        me = os.getpid()
        for pid in descendants(worker) + (marked(job) if job else []) + [worker]:
            if pid != me:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        os.killpg(os.getpgrp(), signal.SIGKILL)
    except Exception:  # noqa: BLE001 - whatever happens, the caller ends
        pass
