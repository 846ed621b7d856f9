"""A DataLoader worker that raised or died, in our words (pure Python: no torch needed to parse).

With ``num_workers > 0`` the user's ``__getitem__``, ``collate_fn`` or ``worker_init_fn`` runs in a
worker process; torch sends only the text of its traceback back and raises a new exception in the
main process ("Caught ValueError in DataLoader worker process 0. Original Traceback ..."). A worker
that dies (a segfault, ``os._exit``, the out-of-memory killer) gives "DataLoader worker (pid X)
exited unexpectedly" or "... is killed by signal: ...". ``parse_worker_traceback`` reads the first
kind of text back into the exception type, message, frames and the user's own innermost line;
``LoaderWorkerError`` carries what the check's ERROR result says.
"""

from __future__ import annotations

import os
import re
import signal
import sysconfig
from dataclasses import dataclass, field
from typing import Any, Optional

from ..checks.user_files import is_user_file

_WRAPPED = re.compile(
    r"Caught (?P<type>[\w.]+) in DataLoader worker process (?P<worker>\d+)\.\s*\nOriginal (?=Traceback)"
)
_HEADER = re.compile(r"^Traceback \(most recent call last\):[ \t]*$", re.M)
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_DIED = re.compile(r"DataLoader worker \(pids?(?:\(s\))? (?P<pids>\d+(?:, *\d+)*)\)")
_SIGNAL_TEXT = re.compile(r"killed by signal: (?P<name>[^.\n]+)")
_EXIT_TEXT = re.compile(r"exit code (?P<code>-?\d+)")


@dataclass
class Frame:
    file: str
    line: int
    func: str
    code: str = ""


@dataclass
class WorkerTrace:
    """What a worker's traceback text says: the original exception and where it was raised."""

    exc_type: str
    worker: int
    message: str
    frames: list = field(default_factory=list)  # outermost first, of the exception that was raised

    @property
    def user_frame(self) -> Optional[Frame]:
        """The innermost frame in the user's own code (not torch, Torch Doctor, the standard
        library or an installed package), or None when every frame is library code."""
        return next((f for f in reversed(self.frames) if is_user_file(f.file)), None)

    @property
    def stage(self) -> str:
        """Which of the user's hooks the worker was running: ``__getitem__``, ``collate_fn``,
        ``worker_init_fn``, ``__iter__`` (an IterableDataset), or "" when the frames do not say."""
        for f in self.frames:
            if "torch" not in f.file.replace("\\", "/").split("/") or not f.code:
                continue
            if "init_fn" in f.code:
                return "worker_init_fn"
            if "collate_fn" in f.code:
                return "collate_fn"
            if "dataset_iter" in f.code:
                return "__iter__"
            if "self.dataset[" in f.code or "__getitems__" in f.code:
                return "__getitem__"
        return ""


def exception_text(exc: BaseException) -> str:
    """The text torch put in the re-raised exception (its message, whatever the exception's type)."""
    text = str(exc)
    if _WRAPPED.search(text):
        return text
    for part in list(getattr(exc, "args", ())) + [getattr(exc, "message", None)]:
        if isinstance(part, str) and _WRAPPED.search(part):
            return part
    return text


def parse_worker_traceback(text: str) -> Optional[WorkerTrace]:
    """The original exception in torch's "Caught X in DataLoader worker process N" text, or None
    when ``text`` is not such a message. A chained exception prints its causes first: the frames
    and message are those of the last block, the exception that was raised."""
    m = _WRAPPED.search(text)
    if m is None:
        return None
    blocks = _HEADER.split(text[m.end() :])
    lines = blocks[-1].splitlines()
    frames: list = []
    end = 0
    for n, line in enumerate(lines):
        fm = _FRAME.match(line)
        if fm:
            frames.append(Frame(fm["file"], int(fm["line"]), fm["func"].strip()))
            end = n + 1
        elif frames and line.startswith("    "):
            stripped = line.strip()
            if not frames[-1].code and stripped and set(stripped) - set("^~ "):
                frames[-1].code = stripped
            end = n + 1
        elif frames and not line.strip() and n == end:
            end = n + 1
    tail = [line for line in lines[end:]]
    while tail and not tail[-1].strip():
        tail.pop()
    message = "\n".join(tail).strip()
    name = m["type"]
    first, _, rest = message.partition(":")
    if first.strip() and (first.strip() == name or first.strip().endswith("." + name)):
        message = rest.strip()
    elif message.strip() == name or message.strip().endswith("." + name):
        message = ""
    return WorkerTrace(name, int(m["worker"]), message[:500], frames)


def died_pids(text: str) -> list:
    """The pids in torch's "DataLoader worker (pid(s) X, Y) exited unexpectedly" / "(pid X) is
    killed by signal" text; empty when ``text`` is not about a dead worker."""
    m = _DIED.search(text)
    if m is None:
        return []
    return [int(p) for p in re.split(r", *", m["pids"])]


def exit_cause(exitcode: Optional[int], text: str = "") -> str:
    """How a worker process ended, from its exit code (negative: the signal) or torch's text."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return _signal_words(name)
    if exitcode is not None:
        return f"it exited with status {exitcode} (os._exit, or native code that ended the process)"
    sm = _SIGNAL_TEXT.search(text)
    if sm:
        said = sm["name"].strip()
        named = {"Segmentation fault": "SIGSEGV", "Killed": "SIGKILL", "Bus error": "SIGBUS", "Aborted": "SIGABRT"}
        return _signal_words(named.get(said, said))
    em = _EXIT_TEXT.search(text)
    if em:
        return f"it exited with status {em['code']} (os._exit, or native code that ended the process)"
    return "its exit cause is not known"


def _signal_words(name: str) -> str:
    why = {
        "SIGSEGV": "a segmentation fault in native code, such as an image decoder or a C extension",
        "SIGKILL": "usually the out-of-memory killer (see `dmesg`), else a kill -9",
        "SIGBUS": "usually shared memory (/dev/shm) too small for the batches",
        "SIGABRT": "native code aborted",
    }.get(name)
    return f"it was killed by {name}" + (f", {why}" if why else "")


def short_path(path: str) -> str:
    """A library file by its package path (torch/utils/data/_utils/collate.py, ctypes/__init__.py),
    not the install's."""
    norm = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in norm:
            return norm.split(marker, 1)[1]
    stdlib = (sysconfig.get_paths().get("stdlib") or "").replace("\\", "/").rstrip("/") + "/"
    if stdlib != "/" and norm.startswith(stdlib):
        return norm[len(stdlib) :]
    return os.path.basename(norm)


def drawing_words(note: dict) -> str:
    """What a process was drawing when it ended, from its last note (``watch.py``): ``while drawing
    sample 5 (in `__getitem__`)``; ``while drawing the split`` when the note does not say."""
    stage, index = note.get("stage"), note.get("index")
    batch = note.get("batch") or []
    shown = ", ".join(str(i) for i in batch[:8]) + (", …" if len(batch) > 8 else "")
    if stage == "__getitem__" and index is not None:
        return f"while drawing sample {index!r} (in `__getitem__`)"
    if stage == "__getitems__" and batch:
        return f"while drawing the batch of dataset indices {shown} (in `__getitems__`)"
    if stage == "collate":
        return f"while collating the batch of dataset indices {shown}" if batch else "while collating a batch"
    if stage == "__iter__" and index is not None:
        return f"while drawing sample {index} of the stream (in the dataset's `__iter__`)"
    return "while drawing the split"


_STAGE_WORDS = {
    "__getitem__": " in __getitem__",
    "collate_fn": " while collating a batch",
    "worker_init_fn": " in worker_init_fn",
    "__iter__": " in the dataset's __iter__",
}


class LoaderWorkerError(Exception):
    """A DataLoader worker raised (``died`` False) or died (``died`` True) while a split was drawn."""

    def __init__(
        self,
        split: str,
        *,
        died: bool,
        worker: Optional[int] = None,
        exc_type: str = "",
        message: str = "",
        frame: Optional[Frame] = None,
        stage: str = "",
        index: Any = None,
        cause: str = "",
        detail: str = "",
        note: Optional[dict] = None,
    ) -> None:
        self.split, self.died, self.worker, self.exc_type, self.message = split, died, worker, exc_type, message
        self.frame, self.stage, self.index, self.cause, self.detail = frame, stage, index, cause, detail
        self.note = note or {}  # a dead worker's last note (watch.py): what it was drawing
        if died and self.index is None and self.note.get("stage") == "__getitem__":
            self.index = self.note.get("index")
        if died and not self.stage and self.note.get("stage") not in (None, "idle"):
            self.stage = {"collate": "collate_fn"}.get(str(self.note["stage"]), str(self.note["stage"]))
        super().__init__(self.headline())

    def _who(self) -> str:
        return f"DataLoader worker {self.worker}" if self.worker is not None else "a DataLoader worker"

    def headline(self) -> str:
        if self.died:
            return (
                f"{self.split}: {self._who()} died {drawing_words(self.note)}: {self.cause}. "
                f"The check could not draw {self.split}. Next step: run with num_workers=0 to see the "
                "failure in your own process (a crash in native code stops that process too, at the "
                "sample that causes it), and check the memory the loader's batches and workers need"
            )
        what = f"{self.exc_type}: {self.message}" if self.message else self.exc_type
        hook = _STAGE_WORDS.get(self.stage, "")
        if self.index is not None:
            sample = f" on sample {self.index!r}"
        elif self.stage == "__getitem__":
            sample = " (on which sample is not known: the worker does not report it)"
        else:
            sample = ""
        at = f" at {self.frame.file}:{self.frame.line}" if self.frame is not None else ""
        if self.frame is None and self.stage == "collate_fn":
            at = " in torch's default collate (do the samples of one batch differ in shape or type?)"
            if "resize storage that is not resizable" in self.message:  # a worker stacks into shared memory
                at = " in torch's default collate (a worker says this when the samples of one batch differ in size)"
        if self.stage == "worker_init_fn":
            step = "call your worker_init_fn yourself (it is not run with num_workers=0) to debug it in the debugger"
        else:
            step = "run with num_workers=0 to debug it in the debugger: the error then happens in your own process"
        return f"{self.split}: {self._who()} raised {what}{hook}{sample}{at}. The check could not draw {self.split}. Next step: {step}"

    def traceback_text(self) -> str:
        """The result's detail: the worker's traceback from the first frame in the user's code
        (every frame when none is), or the dead worker's story; never our own frames."""
        if self.died:
            return f"{self._who()} of {self.split} died: {self.cause}.\ntorch said: {self.detail.strip()}"
        trace = parse_worker_traceback(self.detail)
        if trace is None:
            return self.detail
        frames = trace.frames
        what = f"{trace.exc_type}: {trace.message}" if trace.message else trace.exc_type
        first = next((n for n, f in enumerate(frames) if is_user_file(f.file)), None)
        if first is None:  # torch's own code raised (its default collate): where, not its frames
            where = f" (raised in {short_path(frames[-1].file)}, in {frames[-1].func})" if frames else ""
            return f"{self._who()} raised this in library code, not in yours{where}:\n{what}"
        body = "".join(
            f'  File "{f.file}", line {f.line}, in {f.func}\n' + (f"    {f.code}\n" if f.code else "")
            for f in frames[first:]
        )
        return f"Traceback in {self._who()} (most recent call last):\n{body}{what}"

    def to_error(self) -> dict:
        """The extra fields of the ERROR result's ``error`` object."""
        return {
            "cause": "worker-died" if self.died else "worker-raised",
            "split": self.split,
            "worker": self.worker,
            "exception": self.exc_type or None,
            "exceptionMessage": self.message or None,
            "stage": self.stage or None,
            "index": self.index,
            "source": {"file": self.frame.file, "line": self.frame.line} if self.frame else None,
            "exit": self.cause or None,
        }
