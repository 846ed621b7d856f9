"""Drawing a bounded sample of one split, with the global RNG state saved and restored (worker side).

- a map-style Dataset (``__len__`` and ``__getitem__``): up to ``MAX_SAMPLES`` indices, all of them
  or an even random subset (a private generator, seed 0); three indices are drawn twice to see
  whether the dataset's transforms are random;
- an IterableDataset: its first ``MAX_SAMPLES`` samples;
- a DataLoader: up to ``MAX_BATCHES`` batches, each split into samples; the first batch's shape
  and dtypes are kept as the model sees them; samples are numbered by their place in the stream
  (the dataset index when the sampler is sequential).

``Draws`` holds the converted features and labels; ``reduce.py`` turns them into statistics.
"""

from __future__ import annotations

import itertools
import random as _random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from . import thresholds as T
from .arrays import box_labels, dtype_name, split_xy, to_array
from .errors import SampleError
from .loader_errors import LoaderWorkerError, died_pids, exception_text, exit_cause, parse_worker_traceback
from .raw_rows import has_raw_rows
from .reduce import Reducer
from .rng import preserved_rng, seed_all


@dataclass
class Draws:
    name: str
    kind: str  # "dataset" | "iterable" | "loader"
    obj: Any
    length: Optional[int] = None
    indices: list = field(default_factory=list)
    reducer: Any = None  # reduce.Reducer: the features go there as they are drawn, and are not kept
    numeric: int = 0  # draws whose features are numeric arrays
    probes: dict = field(default_factory=dict)  # position -> features, kept for the randomness probe
    ys: list = field(default_factory=list)
    x_dtype: str = ""
    y_dtype: str = ""
    how: str = ""
    batch_shape: Optional[tuple] = None  # a DataLoader's first batch, as the model sees it
    random: Optional[bool] = None  # the dataset's transforms differ between two draws of one index
    seconds: float = 0.0
    notes: list = field(default_factory=list)
    dataset: Any = None  # the map-style dataset behind it (for redraws), or None
    gallery: int = T.GALLERY_IMAGES  # images kept for the editor's grid (gallery.py)


def is_loader(obj: Any) -> bool:
    return hasattr(obj, "batch_size") and hasattr(obj, "dataset") and hasattr(obj, "__iter__")


def is_map_style(obj: Any) -> bool:
    if _is_iterable_dataset(obj):
        return False
    return hasattr(obj, "__getitem__") and hasattr(obj, "__len__")


def _is_iterable_dataset(obj: Any) -> bool:
    return any(c.__name__ == "IterableDataset" for c in type(obj).__mro__)


def draw(
    name: str,
    obj: Any,
    max_samples: int = T.MAX_SAMPLES,
    max_batches: int = T.MAX_BATCHES,
    gallery: int = T.GALLERY_IMAGES,
) -> Draws:
    """Every draw of one split; the global RNG state is the same before and after."""
    started = time.perf_counter()
    with preserved_rng():
        if is_loader(obj):
            d = _draw_loader(name, obj, max_batches, max_samples, gallery)
        elif is_map_style(obj):
            d = _draw_dataset(name, obj, max_samples, gallery)
        elif hasattr(obj, "__iter__"):
            d = _draw_iterable(name, obj, max_samples, gallery)
        else:
            raise TypeError(f"split {name!r} is a {type(obj).__name__}: not a Dataset, DataLoader or iterable")
    d.seconds = time.perf_counter() - started
    return d


def sample_indices(length: int, max_samples: int) -> list[int]:
    if length <= max_samples:
        return list(range(length))
    return sorted(_random.Random(0).sample(range(length), max_samples))


def _add(d: Draws, index: Any, sample: Any) -> None:
    x, y, how = split_xy(sample)
    if not d.how:
        d.how, d.x_dtype, d.y_dtype = how, dtype_name(x), dtype_name(y) if y is not None else ""
    _feed(d, index, x if type(x) is _tensor_type() else to_array(x))
    boxes = box_labels(y) if isinstance(y, (dict, list, tuple)) else None
    d.ys.append(y if boxes is None else boxes)  # converted all at once in reduce._labels


def _tensor_type() -> Any:
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else None


def _feed(d: Draws, index: Any, x: Any) -> None:
    if d.reducer is None:
        d.reducer = Reducer(d.name, d.gallery)
    if len(d.indices) in d.probes:
        d.probes[len(d.indices)] = x
    d.indices.append(index)
    d.numeric += x is not None  # a tensor counts: only numeric tensors are passed through
    d.reducer.add(index, x)


def _draw_dataset(name: str, ds: Any, max_samples: int, gallery: int = T.GALLERY_IMAGES) -> Draws:
    length = len(ds)
    d = Draws(name, "dataset", ds, length=length, dataset=ds, gallery=gallery)
    d.reducer = Reducer(name, gallery)
    d.reducer.s.hashed = not has_raw_rows(ds)  # duplicates hash the stored rows: drawn digests are not needed
    idx = sample_indices(length, max_samples)
    step = max(1, len(idx) // T.RANDOM_PROBES)
    d.probes = {k: None for k in range(0, len(idx), step)[: T.RANDOM_PROBES]}
    for i in idx:
        try:
            sample = ds[i]
        except Exception as exc:  # noqa: BLE001 - the user's __getitem__: reported with the index
            raise SampleError(name, i, exc) from exc
        _add(d, i, sample)
    if length < max_samples:
        d.notes.append(f"{name}: all {length} samples drawn")
    else:
        d.notes.append(f"{name}: {len(idx)} of {length} samples drawn (a random subset, seed 0)")
    d.random = _is_random(ds, idx, d.probes)
    return d


def _is_random(ds: Any, idx: list, probes: dict) -> bool:
    """Draw a few indices again: any difference means a random transform."""
    for k, kept in probes.items():
        first = to_array(kept)
        again = to_array(split_xy(ds[idx[k]])[0])
        if first is None or again is None:
            continue
        if first.shape != again.shape or not np.array_equal(first, again, equal_nan=True):
            return True
    return False


def redraw(ds: Any, index: int, times: int) -> list:
    """``times`` more draws of one index (features only), RNG preserved. The generators are seeded
    by the index first: restored to the same state for every index, each would see the same random
    parameters, and every index would be blank in the same share of its draws."""
    with preserved_rng():
        seed_all(T.REDRAW_SEED + (index if isinstance(index, int) else 0))
        return [to_array(split_xy(ds[index])[0]) for _ in range(times)]


def seeded_draws(ds: Any, indices: list, seed: int = 0) -> list:
    """Each index drawn with every generator seeded alike: a random transform takes the same
    parameters for every sample, so identical stored samples give identical features."""
    out = []
    with preserved_rng():
        for i in indices:
            seed_all(seed)
            out.append(to_array(split_xy(ds[i])[0]))
    return out


def _draw_iterable(name: str, it: Any, max_samples: int, gallery: int = T.GALLERY_IMAGES) -> Draws:
    d = Draws(name, "iterable", it, gallery=gallery)
    for pos, sample in enumerate(it):
        if pos >= max_samples:
            break
        _add(d, pos, sample)
    d.notes.append(f"{name}: the first {len(d.indices)} samples of the iterable")
    return d


def _draw_loader(name: str, loader: Any, max_batches: int, max_samples: int, gallery: int = T.GALLERY_IMAGES) -> Draws:
    ds = loader.dataset
    d = Draws(name, "loader", loader, dataset=ds if is_map_style(ds) else None, gallery=gallery)
    try:
        d.length = len(ds)
    except TypeError:
        d.length = None
    sequential = _sequential(loader)
    if d.dataset is not None and d.length:
        try:
            first = ds[0]
        except Exception as exc:  # noqa: BLE001 - the user's __getitem__: reported with the index
            raise SampleError(name, 0, exc) from exc
        d.random = _is_random(ds, [0], {0: split_xy(first)[0]})  # the loader's transforms are the dataset's
    pos = 0
    received = 0  # batches taken: an error from the loader is about the next one
    iterator = iter(loader)
    try:
        try:
            for b, batch in enumerate(iterator):
                if b >= max_batches or pos >= max_samples:
                    break
                pos = _take_batch(d, b, batch, pos)
                received += 1
        except Exception as exc:  # noqa: BLE001 - a worker's error, said in our words; others as they were
            worker_error = _worker_error(name, loader, iterator, received, exc)
            if worker_error is not None:
                raise worker_error from exc
            if not getattr(loader, "num_workers", 0):  # in this process: the index, when knowable
                index = _failing_index(loader, received, type(exc).__name__)
                if index is not None:
                    raise SampleError(name, index, exc) from exc
            raise
    finally:
        _shutdown(iterator)
    where = "dataset indices (sequential sampler)" if sequential else "positions in the loader's stream"
    d.notes.append(f"{name}: {len(d.indices)} samples from the first batches of the DataLoader; numbers are {where}")
    return d


def _take_batch(d: Draws, b: int, batch: Any, pos: int) -> int:
    """One batch into ``d``; the next position in the stream."""
    x, y, how = split_xy(batch)
    xa, ya = to_array(x), to_array(y) if y is not None else None
    if b == 0:
        d.how, d.x_dtype = how, dtype_name(x)
        d.y_dtype = dtype_name(y) if y is not None else ""
        d.batch_shape = tuple(xa.shape) if xa is not None else None
    n = len(xa) if xa is not None and xa.ndim else 0
    if d.reducer is None:
        d.reducer = Reducer(d.name, d.gallery)
    if n:
        assert xa is not None
        d.reducer.add_batch(list(range(pos, pos + n)), xa)
    d.indices += range(pos, pos + n)
    d.numeric += n
    labels = list(ya) if ya is not None and ya.ndim and len(ya) == n else _box_targets(y, n)
    d.ys += labels  # numpy scalars or arrays
    pos += n
    return pos


def _box_targets(y: Any, n: int) -> list:
    """One detection target per sample of a batch whose labels are a list or tuple of per-image
    target dicts (DETR's collate), each as its box labels; else one None per sample."""
    if isinstance(y, (list, tuple)) and len(y) == n:
        boxes = [box_labels(t) for t in y]
        if all(b is not None for b in boxes):
            return boxes
    return [None] * n


def _worker_error(
    name: str, loader: Any, iterator: Any, received: int, exc: BaseException
) -> Optional[LoaderWorkerError]:
    """``exc`` in our words when a DataLoader worker raised it or died (else None), read before the
    workers are shut down: their exit codes are still there."""
    text = exception_text(exc)
    trace = parse_worker_traceback(text)
    if trace is not None:
        frame = trace.user_frame
        index = _failing_index(loader, received, trace.exc_type) if trace.stage == "__getitem__" else None
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
    pids = died_pids(text)
    if not pids:
        return None
    workers = list(getattr(iterator, "_workers", None) or [])
    found = [(n, w) for n, w in enumerate(workers) if getattr(w, "pid", None) in pids]
    worker, code = (found[0][0], getattr(found[0][1], "exitcode", None)) if found else (None, None)
    return LoaderWorkerError(name, died=True, worker=worker, cause=exit_cause(code, text), detail=text)


def _sequential(loader: Any) -> bool:
    """Whether the loader draws the dataset in index order. A loader given a ``batch_sampler``
    (DETR's ``BatchSampler(RandomSampler(ds), ...)``) still has torch's default SequentialSampler
    as ``loader.sampler``: the batch sampler's own sampler is the one that orders the draws."""
    if type(getattr(loader, "sampler", None)).__name__ != "SequentialSampler":
        return False
    inner = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
    return inner is None or type(inner).__name__ == "SequentialSampler"


def _failing_index(loader: Any, received: int, exc_type: str) -> Any:
    """The dataset index whose ``__getitem__`` raised in a worker, found by drawing the failing
    batch's indices again here, in order; None when that batch is not knowable (a shuffled or
    custom sampler, batches out of order) or every index draws fine here."""
    sampler: Any = getattr(loader, "sampler", None)
    batches: Any = getattr(loader, "batch_sampler", None)
    if not _sequential(loader) or getattr(loader, "in_order", True) is False:
        return None
    if batches is not None and type(batches).__name__ != "BatchSampler":
        return None
    try:
        if batches is not None:
            batch = next(itertools.islice(iter(batches), received, None), None)
        else:
            batch = [next(itertools.islice(iter(sampler), received, None))]
    except Exception:  # noqa: BLE001 - the sampler itself: the index stays unknown
        return None
    for i in batch or []:
        try:
            loader.dataset[i]
        except Exception as again:  # noqa: BLE001 - the same error, here: that is the sample
            return i if type(again).__name__ == exc_type else None
    return None


def _shutdown(iterator: Any) -> None:
    stop: Optional[Callable] = getattr(iterator, "_shutdown_workers", None)
    if stop is not None:
        try:
            stop()
        except Exception:  # noqa: BLE001 - a loader that cannot stop its workers must not fail the check
            pass
