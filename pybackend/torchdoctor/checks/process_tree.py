"""Stopping a check worker and everything it started (backend side, stdlib only).

A worker runs in a session and process group of its own. User code may leave more behind than
the worker: DataLoader workers (same group), a ``subprocess.Popen`` that outlives the forward
(same group, and it keeps our pipes open), a forked child that called ``setsid`` (a new group:
``killpg`` misses it). So a stop kills, in this order:

1. the descendants of the worker found through ``/proc/<pid>/task/<tid>/children`` (Linux), while
   the worker is still there to hold the tree together;
2. every process that carries this job's marker in its environment (``JOB_MARKER``): that finds
   the children that were re-parented to init after their parent exited;
3. the worker's process group, even when the group leader (the worker) has already exited: the
   group lives on as long as one member does, and its id is not reused while it does.

Where ``/proc`` is missing (macOS, Windows) only the group (or the process) is killed.
"""

from __future__ import annotations

import os
import signal
from typing import Iterable, List, Optional, Set

JOB_MARKER = "TORCHDOCTOR_JOB_ID"  # env var every process of one job inherits, with the job's id
_PROC = "/proc"


def children(pid: int) -> List[int]:
    """The direct children of ``pid`` (all its threads'), from /proc; [] where there is none."""
    found: List[int] = []
    try:
        tids = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"{_PROC}/{pid}/task/{tid}/children") as f:
                found.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int, limit: int = 10000) -> List[int]:
    """Every process below ``pid`` (breadth first, at most ``limit``)."""
    seen: Set[int] = set()
    queue = [pid]
    order: List[int] = []
    while queue and len(order) < limit:
        for child in children(queue.pop(0)):
            if child not in seen:
                seen.add(child)
                order.append(child)
                queue.append(child)
    return order


def marked(job_id: str) -> List[int]:
    """The processes whose environment holds ``JOB_MARKER=job_id`` (own user's only: others are unreadable)."""
    needle = f"{JOB_MARKER}={job_id}".encode()
    found: List[int] = []
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return found
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"{_PROC}/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def kill_tree(pid: int, job_id: Optional[str] = None, leader_alive: bool = True) -> List[int]:
    """SIGKILL the worker ``pid``, its descendants, the marked processes and its group; the pids hit.

    ``leader_alive=False`` once the worker was reaped: its pid may belong to someone else by now,
    so neither it nor its /proc children are touched (the marker and the group still are).
    """
    if os.name != "posix":
        if leader_alive:
            _kill_windows(pid)
        return [pid]
    hit = (descendants(pid) if leader_alive else []) + (marked(job_id) if job_id else [])
    _kill_each(hit)
    try:
        os.killpg(pid, signal.SIGKILL)  # the group outlives its leader: no returncode test here
    except (ProcessLookupError, PermissionError):
        pass
    if leader_alive:
        _kill_each([pid])
    return hit


def _kill_each(pids: Iterable[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_windows(pid: int) -> None:
    import subprocess

    # /T: the whole tree, /F: forcefully (no console to send CTRL_BREAK to)
    subprocess.run(["taskkill", "/T", "/F", "/PID", str(pid)], capture_output=True, check=False)
