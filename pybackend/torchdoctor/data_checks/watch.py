"""Where the data check is, kept where the backend can read it after the worker crashed or hung
(standard library only: the backend side reads the files, the worker side writes them).

The worker notes what it is about to do before it calls into the user's code (``note``: importing
the file, building the splits, ``dataset[i]``, collating a batch, waiting for a DataLoader's next
batch); the last note says where it was when the process ended. With ``install(folder)`` (the
data-check worker, ``--watch``) every note is also written in place to ``where-<pid>.json`` in a
folder the backend made, and the Python stacks go to ``stack-<pid>.txt``: on a crash
(``faulthandler``: SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) and when the backend asks for them
at the time limit (``ASK_SIGNAL``), before it stops the process tree. A process forked from the worker (a DataLoader worker)
gets its own two files, and its DataLoader fetcher notes each index and records the first sample
or batch that failed in ``failed-<pid>.jsonl`` (``read_failure``): torch hands the main process only the
text of a worker's traceback, which names neither.

Without ``install`` (a check run inside a paused program) the notes stay in memory: ``current()``
and ``take_failure()`` still name the index and the batch of a DataLoader drawn in this process.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import threading
from typing import Any, Callable, Optional

WHERE = "where-{pid}.json"
SLOT = 1 << 14  # bytes of the note file mapped into memory: a note is a copy there, no system call
# The last 8 bytes of the mapped note file: a sample's index as a native int64. ``note_sample`` writes
# only these (the JSON before them says ``"indexAt"``, written once per split): a bytes copy into the
# mapping cost ~4 us a sample beside a CIFAR-like ``__getitem__`` (~16 ms of 2,000), the int ~0.6 us.
INDEX_AT = SLOT - 8
STACK = "stack-{pid}.txt"
FAILED = "failed-{pid}.jsonl"
ASK_SIGNAL: Optional[int] = getattr(signal, "SIGUSR2", None)
MAX_BATCH = 256  # indices of a batch kept in a note
IDLE = "idle"
SAMPLE = "__getitem__"  # the stage of note_sample


class _State:
    def __init__(self) -> None:
        self.folder: Optional[str] = None
        self.fd: Optional[int] = None
        self.map: Any = None  # the note file's first SLOT bytes, mapped (None: written with pwrite)
        self.written = 0  # the longest note written: shorter ones are padded over it
        self.note: Any = {}  # the last note: a dict, or note_sample's (split, index)
        self.split = ""
        self.worker: Optional[int] = None  # a DataLoader worker's id (in a forked worker)
        self.child = False  # a process forked from the data-check worker
        self.stack: Any = None  # the open stack file (faulthandler keeps writing to it)
        self.failure: Optional[dict] = None  # the first failed fetch of this process, not yet taken
        self.split_json: dict = {}  # split name -> its JSON text
        self.sample_json: dict = {}  # split name -> its sample note's JSON bytes up to the index
        self.index: Any = None  # the mapped int64 at INDEX_AT (a memoryview), with the map
        self.header: Optional[str] = None  # the split whose "indexAt" note the file holds, if any


_state = _State()


def install(folder: str) -> None:
    """Write notes and stacks to ``folder`` from now on, in this process and its forks."""
    _state.folder = folder
    _open_files()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_in_child)


def _open_files() -> None:
    folder, pid = _state.folder, os.getpid()
    if folder is None:
        return
    try:
        _state.fd = os.open(os.path.join(folder, WHERE.format(pid=pid)), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        _state.written = 0
        _state.map = _mapped(_state.fd)
        _state.index = memoryview(_state.map)[INDEX_AT:].cast("q") if _state.map is not None else None
        _state.stack = open(os.path.join(folder, STACK.format(pid=pid)), "w")  # noqa: SIM115 - open for good
    except OSError:
        _state.fd, _state.map, _state.index = None, None, None
        return
    import faulthandler

    faulthandler.enable(_state.stack, all_threads=True)
    if ASK_SIGNAL is not None:
        faulthandler.register(ASK_SIGNAL, _state.stack, all_threads=True)
    _write(current() or {"stage": IDLE})


def _mapped(fd: int) -> Any:
    """The note file's first ``SLOT`` bytes as shared memory, or None. A note is written once per
    sample: a copy into the mapping costs ~0.3 us where ``pwrite`` cost ~1.3 us (2,000 samples: ~2 ms),
    and the pages are the file's, so a process killed or crashed leaves its last note there as before."""
    try:
        import mmap

        os.ftruncate(fd, SLOT)  # the unused rest reads as NUL bytes (read_note strips them)
        return mmap.mmap(fd, SLOT)
    except (ImportError, OSError, ValueError):
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        return None


def _in_child() -> None:
    """In a process forked from the worker: files of its own, and its DataLoader fetcher watched."""
    if _state.fd is not None:
        try:
            os.close(_state.fd)  # the parent's note file: never written from here
        except OSError:
            pass
    _state.fd, _state.map, _state.child, _state.failure, _state.note = None, None, True, None, {}
    _state.index, _state.header = None, None
    _open_files()
    loader_module = sys.modules.get("torch.utils.data.dataloader")
    kind = getattr(loader_module, "_DatasetKind", None)
    original = getattr(kind, "create_fetcher", None)
    if kind is None or original is None or getattr(original, "_torchdoctor", False):
        return

    def create_fetcher(*args: Any, **kwargs: Any) -> Any:
        fetcher = original(*args, **kwargs)
        info = getattr(sys.modules.get("torch.utils.data"), "get_worker_info", lambda: None)()
        _state.worker = getattr(info, "id", None)
        watch_fetcher(fetcher, _state.split)
        return fetcher

    create_fetcher._torchdoctor = True  # type: ignore[attr-defined]
    kind.create_fetcher = staticmethod(create_fetcher)


# draw threads given up on (stuck.py): their notes are not the check's. The Thread objects, not their
# idents: an ident is reused by a later thread once the first has ended
_abandoned: set = set()


def abandon_thread(thread: threading.Thread) -> None:
    """``thread`` was given up on: what it notes, cuts or fails from now on is ignored (it would
    write into the notes of a later check)."""
    _abandoned.add(thread)


def abandoned_here() -> bool:
    """This thread is a draw given up on (``abandon_thread``)."""
    return bool(_abandoned) and threading.current_thread() in _abandoned


def note(split: str, stage: str, index: Any = None, batch: Any = None, number: Optional[int] = None) -> None:
    """What this process is about to do: ``stage`` of ``split``, on sample ``index`` or the batch
    ``number`` (its dataset indices ``batch``). Ignored from a thread given up on."""
    if _abandoned and threading.current_thread() in _abandoned:
        return
    _state.split = split or _state.split
    n = {"split": split, "stage": stage, "index": index}
    if batch is not None:
        n["batch"] = list(batch)[:MAX_BATCH]
        n["batchSize"] = len(batch)
    if number is not None:
        n["number"] = number
    if _state.worker is not None:
        n["worker"] = _state.worker
    _state.note = n
    if _state.fd is not None:
        _write(n)


def note_sample(split: str, index: Any) -> None:
    """``note(split, "__getitem__", index)``, the note made before every sample: a tuple kept (``current``
    makes the dict) and, in the worker, the index stored as an int64 in the mapped note file, whose JSON
    (``"indexAt"``, read back by ``read_note``) is written once per split; without a mapping, the
    JSON made from bytes cached per split."""
    if type(index) is not int or _state.worker is not None or (_abandoned and threading.current_thread() in _abandoned):
        note(split, SAMPLE, index)
        return
    _state.split = split or _state.split
    _state.note = (split, index)
    if _state.fd is None:
        return
    if _state.index is not None and _state.written <= INDEX_AT and -(1 << 63) <= index < 1 << 63:
        _state.index[0] = index  # first: the header below never points at another sample's index
        if _state.header != split:
            _write_bytes(json.dumps({"split": split, "stage": SAMPLE, "indexAt": INDEX_AT}).encode())
            _state.header = split if _state.index is not None else None
        return
    prefix = _state.sample_json.get(split)
    if prefix is None:
        prefix = _state.sample_json.setdefault(split, _encode({"split": split, "stage": SAMPLE, "index": 0})[:-2])
    _write_bytes(prefix + b"%d}" % index)
    _state.header = None


def sample_noter(split: str) -> Callable[[Any], None]:
    """``note_sample`` bound to ``split``, for a draw loop (``sampling._draw_each``): once the note file
    holds this split's ``"indexAt"`` header, an int index is stored with two writes and no call of
    ``note_sample``, whose own checks (and the call) cost ~0.5 us a sample, ~1 ms of a 2,000-image
    check. Anything else (another note written since, a thread given up on, an index that is not an
    int64, no mapped file) goes ``note_sample``'s way, so what is noted is the same."""
    state, abandoned, full = _state, _abandoned, note_sample

    def noted(index: Any) -> None:
        slot = state.index
        if type(index) is int and state.header == split and slot is not None and not abandoned:
            if -(1 << 63) <= index < 1 << 63:  # a header is written only while written <= INDEX_AT
                state.note = (split, index)
                slot[0] = index
                return
        full(split, index)

    return noted


def idle() -> None:
    note("", IDLE)


def folder() -> Optional[str]:
    """The folder the notes go to (None: in memory only)."""
    return _state.folder


def current() -> dict:
    """The last note of this process ({} before the first)."""
    n = _state.note
    if type(n) is tuple:  # note_sample's
        return {"split": n[0], "stage": SAMPLE, "index": n[1]}
    return dict(n)


def _encode(n: dict) -> bytes:
    """The note as JSON; the common one (a split, one of our stages, an int index) without json's
    cost, which was most of a note's."""
    if len(n) == 3 and type(n["index"]) is int:
        split = _state.split_json.get(n["split"])
        if split is None:
            split = _state.split_json.setdefault(n["split"], json.dumps(n["split"]))
        return f'{{"split": {split}, "stage": "{n["stage"]}", "index": {n["index"]}}}'.encode("utf-8", "replace")
    return json.dumps(n, default=repr).encode("utf-8", "replace")


def _write(n: dict) -> None:
    if _state.fd is None:
        return
    try:
        data = _encode(n)
    except (ValueError, TypeError):
        _state.fd, _state.map, _state.index = None, None, None
        return
    _write_bytes(data)
    _state.header = None  # the file holds this note now, not a sample's header


def _write_bytes(data: bytes) -> None:
    """One note's JSON into the note file, in place, padded over a longer note written before."""
    fd = _state.fd
    if fd is None:
        return
    try:
        size = max(len(data), _state.written)
        if _state.map is not None and size <= INDEX_AT:
            _state.map[:size] = data.ljust(size)  # padded over a longer note before: one note in place
        elif hasattr(os, "pwrite"):
            os.pwrite(fd, data.ljust(size), 0)  # one write in place: a crash leaves a whole note
        else:  # Windows
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, data.ljust(size))
        _state.written = size
    except (OSError, ValueError, TypeError):
        _state.fd, _state.map, _state.index = None, None, None  # the folder is gone: notes in memory only


# -- a DataLoader's fetcher, in this process (num_workers=0) or in a forked worker ----------------


class _NotedDataset:
    """What a DataLoader's fetcher reads instead of the dataset: each index noted before it is
    read, the indices of the batch kept for the collate step."""

    def __init__(self, dataset: Any, split: str) -> None:
        self._dataset, self._split = dataset, split
        self.batch: list = []

    def __getitem__(self, index: Any) -> Any:
        self.batch.append(index)
        note_sample(self._split, index)  # the int64 in the mapped file: a dict's JSON per sample cost ~5 us
        try:
            return self._dataset[index]
        except Exception as exc:
            _failed({"stage": "__getitem__", "index": index}, exc)
            raise

    def __getitems__(self, indices: Any) -> Any:
        own = getattr(self._dataset, "__getitems__", None)
        if not own or _only_subsets(self._dataset):  # torch's own fallback, one index at a time
            return [self[i] for i in indices]
        self.batch = list(indices)
        note(self._split, "__getitems__", batch=indices)
        try:
            return own(indices)
        except Exception as exc:
            _failed({"stage": "__getitems__", "batch": list(indices)[:MAX_BATCH]}, exc)
            raise

    def __len__(self) -> int:
        return len(self._dataset)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dataset, name)

    def take_batch(self) -> list:
        batch, self.batch = self.batch, []
        return batch


def _only_subsets(dataset: Any) -> bool:
    """Whether ``dataset.__getitems__`` is only torch's ``Subset`` (``random_split``) passing the batch
    on to a dataset that reads one index at a time: then reading one index at a time is the same."""
    while type(dataset).__name__ == "Subset" and type(dataset).__module__.startswith("torch.utils.data"):
        dataset = dataset.dataset
    return not callable(getattr(dataset, "__getitems__", None))


class _NotedIterator:
    """An IterableDataset's iterator inside a fetcher: each position noted before it is drawn."""

    def __init__(self, it: Any, split: str) -> None:
        self._it, self._split, self.position = it, split, 0
        self.batch: list = []  # positions in the stream

    def __iter__(self) -> "_NotedIterator":
        return self

    def __next__(self) -> Any:
        note(self._split, "__iter__", self.position)
        value = next(self._it)
        self.batch.append(self.position)
        self.position += 1
        return value

    def take_batch(self) -> list:
        batch, self.batch = self.batch, []
        return batch


def watch_fetcher(fetcher: Any, split: str) -> None:
    """Note every index ``fetcher`` reads and keep the batch whose collate raised. Only this
    fetcher (one iterator's, or a forked worker's) is changed, never the user's DataLoader."""
    try:
        noted: Any
        if hasattr(fetcher, "dataset_iter"):  # an IterableDataset
            noted = _NotedIterator(fetcher.dataset_iter, split)
            fetcher.dataset_iter = noted
        else:
            noted = _NotedDataset(fetcher.dataset, split)
            fetcher.dataset = noted
        fetcher.collate_fn = _noted_collate(fetcher.collate_fn, noted, split)
    except (AttributeError, TypeError):
        pass  # another torch's fetcher: the split is drawn without notes


def _noted_collate(collate: Any, noted: Any, split: str) -> Any:
    stream = isinstance(noted, _NotedIterator)  # the batch holds positions in the stream

    def collate_noted(data: Any) -> Any:
        batch = noted.take_batch()
        note(split, "collate", batch=batch)
        try:
            out = collate(data)
        except Exception as exc:
            _failed({"stage": "collate", "batch": batch, "samples": data, "stream": stream}, exc)
            raise
        idle()
        return out

    return collate_noted


def _failed(record: dict, exc: BaseException) -> None:
    """The first failed fetch of this process: kept for ``take_failure`` here, or, in a forked
    worker, written (with the collate diagnosis made from the samples it has) for the main process."""
    record.update(split=_state.split, exception=type(exc).__name__, error=exc, worker=_state.worker)
    if record["stage"] == "collate":
        from .collate_errors import diagnose, library_collate

        record["default"] = library_collate(exc)
        record["diagnosis"] = diagnose(record["batch"], record["samples"], record.get("stream", False))
        if not record["default"]:
            record["diagnosis"] = None
    if not _state.child:
        _state.failure = record
        return
    if _state.folder is None or _state.failure is not None:
        return
    _state.failure = record
    kept = {k: v for k, v in record.items() if k not in ("samples", "error")}
    try:
        with open(os.path.join(_state.folder, FAILED.format(pid=os.getpid())), "a", encoding="utf-8") as f:
            f.write(json.dumps(kept, default=repr) + "\n")
    except (OSError, ValueError, TypeError):
        pass


def forget_failure() -> None:
    """Drop a kept failure (and the samples it holds) that nobody took (not from a thread given up on:
    the failure may be a later check's)."""
    if not abandoned_here():
        _state.failure = None


def take_failure(exc: BaseException) -> Optional[dict]:
    """What this process's fetcher knew when ``exc`` was raised (the stage, index or batch, its
    samples and the collate diagnosis), once; None when ``exc`` did not come from a fetch here."""
    record, _state.failure = _state.failure, None
    if record is None or record.get("error") is not exc:
        return None
    return record


# -- the backend side: reading the folder --------------------------------------------------------


def read_note(folder: str, pid: int) -> dict:
    """The last note of process ``pid`` ({} when it wrote none); a sample note's ``"indexAt"`` is
    replaced by the index stored there (``note_sample``)."""
    try:
        with open(os.path.join(folder, WHERE.format(pid=pid)), "rb") as f:
            data = f.read()
        text = (data[:INDEX_AT] if len(data) == SLOT else data).decode("utf-8", "replace")  # longer: a long note
        value = json.loads(text.rstrip("\x00").strip() or "{}")
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    at = value.pop("indexAt", None)
    if type(at) is int and 0 <= at and at + 8 <= len(data):
        value["index"] = struct.unpack_from("=q", data, at)[0]
    return value


def read_failure(folder: str, pid: int) -> Optional[dict]:
    """The first failed fetch a forked worker wrote, or None."""
    try:
        with open(os.path.join(folder, FAILED.format(pid=pid)), encoding="utf-8", errors="replace") as f:
            value = json.loads(f.readline() or "null")
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def read_stack(folder: str, pid: int) -> str:
    try:
        with open(os.path.join(folder, STACK.format(pid=pid)), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stack_size(folder: str, pid: int) -> int:
    try:
        return os.path.getsize(os.path.join(folder, STACK.format(pid=pid)))
    except OSError:
        return 0


def watched_pids(folder: str) -> list:
    """The processes that keep notes in ``folder``: the worker and the forks it watched."""
    pids: list = []
    try:
        names = os.listdir(folder)
    except OSError:
        return pids
    head, _, tail = WHERE.partition("{pid}")
    for name in names:
        if name.startswith(head) and name.endswith(tail) and name[len(head) : -len(tail)].isdigit():
            pids.append(int(name[len(head) : -len(tail)]))
    return sorted(pids)
