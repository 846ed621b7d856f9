"""A DataLoader that raised while a split was drawn: which sample or batch, in our words (worker side).

``loader_error`` turns the exception out of ``next(iterator)`` into what the check reports:

- drawn in this process (``num_workers=0``): the fetcher's notes (``watch.py``) say which index
  raised (any sampler, shuffled too) or which batch did not collate, with its samples;
- in a DataLoader worker: torch's text of the worker's traceback (``loader_errors.py``), plus what
  the forked worker wrote (the index that raised, the batch and the collate diagnosis); when it
  wrote nothing (a check inside a paused program, a ``spawn`` context) a sequential sampler's batch
  is drawn again here;
- a worker that died: how, and what it was drawing (its last note).
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

from . import watch
from .collate_errors import CollateError, diagnose
from .errors import SampleError, user_frames
from .loader_errors import LoaderWorkerError, died_pids, exception_text, exit_cause, parse_worker_traceback
from .rng import preserved_rng


def loader_error(name: str, loader: Any, iterator: Any, received: int, exc: BaseException) -> BaseException:
    """What to raise for ``exc``, raised while batch ``received`` of ``loader`` was drawn: ``exc``
    itself when nothing better is known. Read before the workers are shut down."""
    failure = watch.take_failure(exc)
    if failure is not None:
        return _in_process(name, received, failure, exc)
    worker_error = _worker_error(name, loader, iterator, received, exc)
    if worker_error is not None:
        return worker_error
    if not getattr(loader, "num_workers", 0):
        index = _failing_index(name, loader, received, type(exc).__name__)
        if index is not None:
            return SampleError(name, index, exc)
    return exc


def _in_process(name: str, received: int, failure: dict, exc: BaseException) -> BaseException:
    stage = failure.get("stage")
    if stage == "__getitem__":
        return SampleError(name, failure.get("index"), exc)
    if stage == "__getitems__":
        return SampleError(name, failure.get("batch"), exc)
    own = not failure.get("default")
    frame = _user_frame(exc) if own else None
    return CollateError(
        name,
        received,
        failure,
        type(exc).__name__,
        str(exc)[:500],
        source=frame,
        trace=user_frames(exc) if own else "",
    )


def _user_frame(exc: BaseException) -> Optional[dict]:
    import traceback

    from .loader_errors import is_user_file

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_user_file(f.filename)]
    return {"file": frames[-1].filename, "line": frames[-1].lineno} if frames else None


def _worker_pid(iterator: Any, worker: Optional[int]) -> Optional[int]:
    workers = list(getattr(iterator, "_workers", None) or [])
    if worker is None or not 0 <= worker < len(workers):
        return None
    return getattr(workers[worker], "pid", None)


def _written(iterator: Any, worker: Optional[int], exc_type: str) -> Optional[dict]:
    """The first failure the forked worker wrote, when it is this exception."""
    folder, pid = watch.folder(), _worker_pid(iterator, worker)
    if folder is None or pid is None:
        return None
    record = watch.read_failure(folder, pid)
    return record if record is not None and record.get("exception") == exc_type else None


def _worker_error(name: str, loader: Any, iterator: Any, received: int, exc: BaseException) -> Optional[BaseException]:
    """``exc`` in our words when a DataLoader worker raised it or died (else None)."""
    text = exception_text(exc)
    trace = parse_worker_traceback(text)
    if trace is not None:
        frame = trace.user_frame
        record = _written(iterator, trace.worker, trace.exc_type)
        if trace.stage == "collate_fn" and frame is None:  # torch's default collate
            record = record or _redrawn_batch(name, loader, received)
            if record is not None and record.get("stage") == "collate":
                return CollateError(
                    name, received, dict(record, default=True), trace.exc_type, trace.message, trace.worker
                )
        index = None
        if trace.stage == "__getitem__":
            index = record.get("index") if record and record.get("stage") == "__getitem__" else None
            if index is None:
                index = _failing_index(name, loader, received, trace.exc_type)
        return LoaderWorkerError(
            name,
            died=False,
            worker=trace.worker,
            exc_type=trace.exc_type,
            message=trace.message,
            frame=frame,
            stage=trace.stage,
            index=index,
            detail=text,
        )
    workers = list(getattr(iterator, "_workers", None) or [])
    pids = died_pids(text)
    if pids:
        found = [(n, w) for n, w in enumerate(workers) if getattr(w, "pid", None) in pids]
    elif isinstance(exc, (OSError, EOFError)):
        # A worker that died mid-batch can break its pipe before torch's SIGCHLD check speaks:
        # the reader raises ConnectionResetError or EOFError, and the dead worker tells the rest.
        found = _dead_workers(workers)
        if not found:
            return None
        pids = [found[0][1].pid]
    else:
        return None
    worker, code = (found[0][0], getattr(found[0][1], "exitcode", None)) if found else (None, None)
    folder = watch.folder()
    # No iterator (a worker that died while ``iter(loader)`` started them and fetched ahead): its
    # note is still found by the pid torch names.
    pid = found[0][1].pid if found else pids[0]
    note = watch.read_note(folder, pid) if folder else {}
    return LoaderWorkerError(name, died=True, worker=worker, cause=exit_cause(code, text), detail=text, note=note)


def _dead_workers(workers: list, wait: float = 2.0) -> list:
    """``(number, process)`` of the workers that died, waiting up to ``wait`` seconds: the batch
    whose pipe broke was often sent by a worker that is still going down (its fd-sharing thread
    closed the connection first)."""
    import time

    deadline = time.monotonic() + wait
    while True:
        found = [(n, w) for n, w in enumerate(workers) if getattr(w, "exitcode", None) not in (None, 0)]
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def sequential(loader: Any) -> bool:
    """Whether the loader draws the dataset in index order. A loader given a ``batch_sampler``
    (DETR's ``BatchSampler(RandomSampler(ds), ...)``) still has torch's default SequentialSampler
    as ``loader.sampler``: the batch sampler's own sampler is the one that orders the draws."""
    if type(getattr(loader, "sampler", None)).__name__ != "SequentialSampler":
        return False
    inner = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
    return inner is None or type(inner).__name__ == "SequentialSampler"


def _replayed_batch(loader: Any, received: int) -> Optional[list]:
    """The dataset indices of batch ``received`` when the sampler is sequential (drawing it again
    gives the same batch), else None."""
    sampler: Any = getattr(loader, "sampler", None)
    batches: Any = getattr(loader, "batch_sampler", None)
    if not sequential(loader) or getattr(loader, "in_order", True) is False:
        return None
    if batches is not None and type(batches).__name__ != "BatchSampler":
        return None
    try:
        if batches is not None:
            batch = next(itertools.islice(iter(batches), received, None), None)
        else:
            batch = [next(itertools.islice(iter(sampler), received, None))]
    except Exception:  # noqa: BLE001 - the sampler itself: the batch stays unknown
        return None
    return list(batch) if batch is not None else None


def _redrawn_batch(name: str, loader: Any, received: int) -> Optional[dict]:
    """The failed batch drawn again here (a sequential sampler only) and diagnosed, or None."""
    batch = _replayed_batch(loader, received)
    if not batch:
        return None
    samples = []
    with preserved_rng():
        for i in batch:
            watch.note(name, "__getitem__", i)
            try:
                samples.append(loader.dataset[i])
            except Exception:  # noqa: BLE001 - it drew in the worker: no diagnosis from here
                return None
    watch.idle()
    return {"stage": "collate", "batch": batch, "diagnosis": diagnose(batch, samples), "default": True}


def _failing_index(name: str, loader: Any, received: int, exc_type: str) -> Any:
    """The dataset index whose ``__getitem__`` raised in a worker, found by drawing the failing
    batch's indices again here, in order; None when that batch is not knowable (a shuffled or
    custom sampler, batches out of order) or every index draws fine here."""
    for i in _replayed_batch(loader, received) or []:
        try:
            watch.note(name, "__getitem__", i)
            loader.dataset[i]
        except Exception as again:  # noqa: BLE001 - the same error, here: that is the sample
            return i if type(again).__name__ == exc_type else None
    return None
