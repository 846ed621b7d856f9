"""A data-check worker that ended without a result, in our words (backend side, standard library only).

The worker kept notes of where it was and its Python stacks in a folder of the backend's
(``watch.py``). When it crashed (a segfault, ``os._exit`` in the dataset's code) or hung past the
time limit, the result names what it was doing (importing the file, building the splits, the
split and the sample index or batch), how it ended (the signal or exit status, the time limit)
and where (the user's innermost line from the stack, with the library call it was inside), with
the stack in the detail: the user's frames first, Torch Doctor's never. ``ask_for_stacks`` has the
worker and its watched forks write their stacks at the time limit, before they are stopped.
"""

from __future__ import annotations

import linecache
import os
import re
import signal
from dataclasses import dataclass
from typing import Optional

from ..checks import process_tree
from ..checks.user_files import PACKAGE, is_user_file
from . import findings as F
from . import watch
from .loader_errors import drawing_words, exit_cause, short_path

SAMPLE_STAGES = ("__getitem__", "__getitems__", "collate", "__iter__", "next-batch")
_THREAD = re.compile(r"^(Current thread|Thread) .*\(most recent call first\):\s*$")
_FRAME = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<func>.*)$')


@dataclass
class StackFrame:
    file: str
    line: int
    func: str

    def text(self) -> str:
        return f"{self.file}:{self.line} in {self.func}"


def ask_for_stacks(folder: str, worker_pid: int) -> dict:
    """Signal the worker and the forks it watched (never another process) to write their Python
    stacks; {pid: its state letter from /proc ("T": stopped), or ""}."""
    if watch.ASK_SIGNAL is None:
        return {}
    family = {worker_pid, *process_tree.descendants(worker_pid)}
    asked = {}
    for pid in watch.watched_pids(folder):
        if pid not in family:
            continue
        asked[pid] = _state_letter(pid)
        try:
            os.kill(pid, watch.ASK_SIGNAL)
        except OSError:
            pass
    return asked


def _state_letter(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return ""


def parse_stack(text: str) -> list:
    """The threads of faulthandler's last dump in ``text``: lists of frames, innermost first; the
    thread that dumped (faulthandler's "Current thread") comes first."""
    if "Fatal Python error" in text:
        text = text[text.rindex("Fatal Python error") :]
    threads: list = []
    current: Optional[list] = None
    for line in text.splitlines():
        if _THREAD.match(line):
            current = []
            if line.startswith("Current"):
                threads.insert(0, current)
            else:
                threads.append(current)
            continue
        m = _FRAME.match(line)
        if m and current is not None:
            current.append(StackFrame(m["file"], int(m["line"]), m["func"].strip()))
    return [t for t in threads if t]


def _ours(frame: StackFrame) -> bool:
    return os.path.abspath(frame.file).startswith(PACKAGE + os.sep)


def stuck_thread(threads: list) -> list:
    """The thread that ran the user's code (the dumping one first), else the dumping one."""
    return next((t for t in threads if any(is_user_file(f.file) for f in t)), threads[0] if threads else [])


def where_words(frames: list) -> str:
    """``data.py:12 in __getitem__ (`lock.acquire()`), inside threading.py:327 in wait``; "" when
    no frame is the user's."""
    user = [n for n, f in enumerate(frames) if is_user_file(f.file)]
    if not user:
        return ""
    mine = frames[user[0]]
    code = linecache.getline(mine.file, mine.line).strip()
    words = f"{mine.file}:{mine.line} in {mine.func}" + (f" (`{code[:80]}`)" if code else "")
    if user[0] > 0 and not _ours(frames[0]):
        inner = frames[0]
        words += f", inside {short_path(inner.file)}:{inner.line} in {inner.func}"
    return words


def stack_words(frames: list, what: str) -> str:
    """The stack for the detail: the user's frames first, then the library frames they were
    inside; Torch Doctor's frames and the library frames around the user's code are counted."""
    user = [n for n, f in enumerate(frames) if is_user_file(f.file)]
    if not frames:
        return ""
    first = ", your code first" if user else ""
    lines = [f"The Python stack of {what}{first} (most recent call first):"]
    shown = set(user)
    lines += [f'  File "{frames[n].file}", line {frames[n].line}, in {frames[n].func}' for n in user]
    if user and user[0] > 0:
        inside = [f for f in frames[: user[0]] if not _ours(f)]
        shown |= {n for n in range(user[0]) if not _ours(frames[n])}
        if inside:
            lines.append("inside (most recent call first):")
            lines += [f'  File "{f.file}", line {f.line}, in {f.func}' for f in inside]
    if not user:
        lines += [f'  File "{f.file}", line {f.line}, in {f.func}' for f in frames if not _ours(f)]
        shown = {n for n, f in enumerate(frames) if not _ours(f)}
    left = len(frames) - len(shown)
    if left:
        lines.append(
            f"({left} more frame{'s' if left != 1 else ''}, of Torch Doctor and the code that called yours, left out)"
        )
    return "\n".join(lines)


def _who(note: dict, child: bool) -> str:
    if not child:
        return ""
    worker = note.get("worker")
    return f" in DataLoader worker {worker}" if worker is not None else " in a DataLoader worker"


def _what(note: dict, file: str, target: str) -> str:
    stage, index, number = note.get("stage"), note.get("index"), note.get("number")
    batch = note.get("batch") or []
    shown = ", ".join(str(i) for i in batch[:8]) + (", …" if len(batch) > 8 else "")
    return {
        "__getitem__": f"`__getitem__` of sample {index!r}",
        "__getitems__": f"`__getitems__` of the batch of dataset indices {shown}",
        "collate": f"the collate_fn of the batch of dataset indices {shown}" if batch else "the collate_fn",
        "__iter__": f"the dataset's `__iter__` (sample {index} of the stream)",
        "next-batch": f"the DataLoader's batch {number}" if number is not None else "the DataLoader's next batch",
        "import": f"importing {os.path.basename(file)}",
        "build": f"building the data ({target})",
    }.get(str(stage), "the data check")


def _prefix(note: dict) -> str:
    split = note.get("split") or ""
    return f"{split}: " if split and note.get("stage") in SAMPLE_STAGES else ""


_HANG_STEP = {
    "import": (
        "keep slow or blocking work at import (downloads, waiting for a server or a lock) in functions or under "
        '`if __name__ == "__main__":`, or raise the time limit'
    ),
    "build": "make the data's constructor return without waiting (a download, a lock, a server), or raise the time limit",
}
_HANG_DEFAULT = (
    "look at what that line waits for (a lock, a queue, a network or disk read, a subprocess): give the wait a "
    "timeout or make what it waits for available; if the data is only slow, raise the time limit or draw fewer "
    "samples (maxSamples)"
)

_STOPPED_STEP = (
    "find what stopped it: a SIGSTOP or SIGTSTP sent to the process (`os.kill(os.getpid(), signal.SIGSTOP)`, "
    "a job-control stop of a terminal it reads) or a debugger attached to it"
)


def _pick(folder: str, worker_pid: int) -> tuple:
    """(pid, note, frames, child) of the process that was stuck: a busy DataLoader worker when the
    check's process was waiting for its batch, else the check's own process."""
    main = watch.read_note(folder, worker_pid)
    if main.get("stage") == "next-batch":
        busy = []
        for pid in watch.watched_pids(folder):
            note = watch.read_note(folder, pid)
            if pid != worker_pid and note.get("stage") not in (None, watch.IDLE):
                frames = stuck_thread(parse_stack(watch.read_stack(folder, pid)))
                busy.append((not any(is_user_file(f.file) for f in frames), pid, note, frames))
        if busy:
            _, pid, note, frames = min(busy, key=lambda b: (b[0], b[1]))
            return pid, note, frames, True
    return worker_pid, main, stuck_thread(parse_stack(watch.read_stack(folder, worker_pid))), False


def timed_out(target: str, file: str, timeout: float, folder: str, worker_pid: int, asked: dict) -> Optional[dict]:
    """The ERROR for a worker stopped at the time limit: what it was doing and where it was stuck;
    None when the worker kept no notes."""
    if worker_pid not in watch.watched_pids(folder):
        return None
    pid, note, frames, child = _pick(folder, worker_pid)
    limit = f"{timeout:g} s (torchDoctor.dataChecks.timeoutSeconds, or --timeout)"
    stage = str(note.get("stage") or "")
    verb = "return" if stage in SAMPLE_STAGES and stage != "next-batch" else "finish"
    where = where_words(frames)
    stopped = (
        " The process was stopped (paused by SIGSTOP or a debugger), so it could not go on."
        if asked.get(pid) in ("T", "t")
        else ""
    )
    message = (
        f"{_prefix(note)}{_what(note, file, target)}{_who(note, child)} did not {verb} within the time limit of "
        f"{limit}{': stuck at ' + where if where else ''}.{stopped} The check stopped its worker and every process it "
        f"started. Next step: {_STOPPED_STEP if stopped else _HANG_STEP.get(stage, _HANG_DEFAULT)}"
    )
    message = message[:1].upper() + message[1:] if not _prefix(note) else message  # "Importing data.py did not"
    who = f"DataLoader worker {note.get('worker')} (pid {pid})" if child else f"the data-check worker (pid {pid})"
    detail = stack_words(frames, who + " at the time limit") or (
        "No Python stack was written: the process did not answer in time" + (" (it was stopped)." if stopped else ".")
    )
    result = F.error_result(target, file, "timeout", message, detail)
    result["error"].update(_fields(note, "hang", child, frames, None))
    return result


def crashed(target: str, file: str, code: Optional[int], folder: str, worker_pid: int) -> Optional[dict]:
    """The ERROR for a worker that the data's own code ended (a crash, ``os._exit``) while importing,
    building or drawing, or None when its notes do not say it was in the data's code."""
    note = watch.read_note(folder, worker_pid)
    stage = str(note.get("stage") or "")
    if stage not in SAMPLE_STAGES + ("import", "build"):
        return None
    frames = stuck_thread(parse_stack(watch.read_stack(folder, worker_pid)))
    cause = exit_cause(code)
    where = where_words(frames)
    at = f" It crashed at {where}." if where else ""
    kind = {"import": "import-error", "build": "constructor-error"}.get(stage, "dataset-error")
    split = note.get("split") or ""
    if stage in SAMPLE_STAGES:
        message = (
            f"{split}: the dataset's code ended the data-check worker {drawing_words(note)}: {cause}.{at} The check "
            f"could not draw {split}. Next step: {_crash_step(code, note)}"
        )
    else:
        what = _what(note, file, target)
        message = f"{what[0].upper()}{what[1:]} ended the data-check worker: {cause}.{at} Next step: {_crash_step(code, note)}"
    detail = stack_words(frames, "the data-check worker when it crashed") or f"The process ended: {cause}."
    result = F.error_result(target, file, kind, message, detail)
    result["error"].update(_fields(note, "process-ended", False, frames, cause))
    return result


def _crash_step(code: Optional[int], note: dict) -> str:
    index, stage = note.get("index"), note.get("stage")
    again = {"import": "the import", "build": "the code that builds the data"}.get(str(stage), "the same draw")
    if stage == "__getitem__" and index is not None:
        again = f"`dataset[{index!r}]`"
    if code is not None and code >= 0:
        told = "with the sample's index and your traceback" if stage in SAMPLE_STAGES else "with your traceback"
        return (
            "something in the data's code called os._exit() or sys.exit() (or a library did): raise an exception "
            f"instead, which the check reports {told}"
        )
    if code == -signal.SIGKILL:
        return (
            f"run {again} in your own process and watch its memory: SIGKILL usually comes from the out-of-memory "
            "killer (the worker's own limit is torchDoctor.checks.memoryLimitMB)"
        )
    return (
        f"run {again} in your own process (a Python shell or the debugger) to see which call crashes: native code "
        "that crashes on one sample usually got a corrupt or unexpected input (check that file, or skip it); "
        "else update or report the library"
    )


def _fields(note: dict, cause: str, child: bool, frames: list, ended: Optional[str]) -> dict:
    mine = next((f for f in frames if is_user_file(f.file)), None)
    stage = note.get("stage")
    return {
        "cause": cause,
        "split": note.get("split") or None,
        "worker": note.get("worker") if child else None,
        "exception": None,
        "exceptionMessage": None,
        "stage": {"collate": "collate_fn"}.get(str(stage), stage),
        "index": note.get("index"),
        "batch": note.get("batch"),
        "source": {"file": mine.file, "line": mine.line} if mine else None,
        "exit": ended,
    }
