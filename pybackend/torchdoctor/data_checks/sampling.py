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

import contextlib
import random as _random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from . import budget, watch
from . import thresholds as T
from .arrays import box_labels, dtype_name, split_xy, to_array
from .errors import SampleError
from .guard import Guard
from .intake import add, add_many, tensor_type
from .loader_failures import loader_error, sequential
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
    cut: bool = False  # the time budget (budget.py) left samples out that would have been drawn
    guard: Any = None  # Guard of a draw in a thread of its own (stuck.py), else None
    seq_first: bool = False  # a loader's token batches are [seq_len, batch]: read transposed (_batch_first)

    def __post_init__(self) -> None:
        guard = getattr(_local, "guard", None)  # set by draw() in stuck.py's thread: this is its Draws
        if guard is not None and self.kind != "table":
            self.guard, guard.draws = guard, self


_local = threading.local()
_FREE = contextlib.nullcontext()


def bind(guard: Optional[Guard]) -> None:
    """This thread draws for ``guard`` (stuck.py): its calls of the user's code are timed and stop once
    it is given up on."""
    _local.guard = guard


def _tick(sample: bool = True) -> None:
    guard = getattr(_local, "guard", None)
    if guard is not None:
        guard.tick(sample)


def _owned(d: Draws) -> Any:
    """``with _owned(d):`` around every change of ``d``: its guard in a thread of stuck.py, else nothing."""
    return d.guard if d.guard is not None else _FREE


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
    raw_everywhere: bool = False,
    guard: Optional[Guard] = None,
) -> Draws:
    """Every draw of one split; the global RNG state is the same before and after.
    ``raw_everywhere``: every split compared for duplicates keeps its stored rows, which are hashed
    instead (``duplicates.py``): a DataLoader's batches then need no fingerprints (about a sixth
    of its check's CPU time). ``guard``: drawn in a thread of ``stuck.py`` (the RNG states are then left to it
    once it gives up: a late restore here would change a program that has gone on)."""
    started = time.perf_counter()
    _local.guard = guard
    with preserved_rng(lambda: guard is None or not guard.abandoned):
        if is_loader(obj):
            d = _draw_loader(name, obj, max_batches, max_samples, gallery, raw_everywhere)
        elif is_map_style(obj):
            d = _draw_dataset(name, obj, max_samples, gallery)
        elif hasattr(obj, "__iter__"):
            d = _draw_iterable(name, obj, max_samples, gallery)
        else:
            raise TypeError(f"split {name!r} is a {type(obj).__name__}: not a Dataset, DataLoader or iterable")
    _local.guard = None
    watch.idle()  # not on the way out of a failure: sys.exit() in the data is said with its sample
    d.seconds = time.perf_counter() - started
    return d


def sample_indices(length: int, max_samples: int) -> list[int]:
    if length <= max_samples:
        return list(range(length))
    return sorted(_random.Random(0).sample(range(length), max_samples))


def _get(split: str, ds: Any, index: Any) -> Any:
    """``ds[index]``, noted first (``watch.py``): a crash or a hang inside it is named with the index."""
    _tick()
    watch.note_sample(split, index)
    return ds[index]


def _draw_dataset(name: str, ds: Any, max_samples: int, gallery: int = T.GALLERY_IMAGES) -> Draws:
    length = len(ds)
    d = Draws(name, "dataset", ds, length=length, dataset=ds, gallery=gallery)
    d.reducer = Reducer(name, gallery)
    d.reducer.s.hashed = not has_raw_rows(ds)  # duplicates hash the stored rows: drawn digests are not needed
    idx = sample_indices(length, max_samples)
    if budget.active() and idx:
        planned = len(idx)
        idx = _fit_budget(name, ds, length, idx)
        with _owned(d):
            d.cut = len(idx) < planned
    step = max(1, len(idx) // T.RANDOM_PROBES)
    d.probes = {k: None for k in range(0, len(idx), step)[: T.RANDOM_PROBES]}
    _draw_each(d, ds, idx)
    with _owned(d):
        if len(d.indices) == length:  # a dataset of exactly max_samples is drawn whole too: no subset
            d.notes.append(f"{name}: all {length} samples drawn")
        else:
            d.notes.append(f"{name}: {len(d.indices)} of {length} samples drawn (a random subset, seed 0)")
    random = _is_random(ds, idx, d.probes, name)
    with _owned(d):
        d.random = random
    return d


ROW = 64  # samples drawn before they are added to the Draws together (_add_many), without a guard


def _draw_each(d: Draws, ds: Any, idx: list) -> None:
    """``ds[i]`` for each index into ``d``, until the time budget's deadline (one sample at least).
    The samples go to ``d`` ``ROW`` at a time (one at a time cost the editor's worker, which draws
    under a guard, ~4% of a CIFAR-like ``__getitem__``); under a guard each row is added inside it, and
    the guard takes the row being drawn when it gives up (``Guard.take_pending``), so what a draw given
    up on had drawn is all in ``d``."""
    name, tensor, guard = d.name, tensor_type(), d.guard
    got: list = []
    note, clock, deadline = watch.sample_noter(name), time.perf_counter, budget.deadline()
    if guard is not None:
        guard.pending = lambda: _flush(d, idx, got, tensor)
    for i in idx:
        now = clock()
        if now > deadline and (d.indices or got):  # inf without a budget; one sample at least
            with _owned(d):
                _flush(d, idx, got, tensor)
                budget.cut(f"{name}: {len(d.indices)} of the {len(idx)} samples planned were drawn")
                d.cut = True
            break
        if guard is not None:
            guard.tick(True, now)
        try:
            note(i)  # _get, inlined: one call less per sample
            sample = ds[i]
        except Exception as exc:  # noqa: BLE001 - the user's __getitem__: reported with the index
            raise SampleError(name, i, exc) from exc
        got.append(sample)
        if len(got) == ROW:
            with _owned(d):
                _flush(d, idx, got, tensor)
    with _owned(d):
        _flush(d, idx, got, tensor)
        if guard is not None:
            guard.pending = None


def _flush(d: Draws, idx: list, got: list, tensor: Any) -> None:
    """The samples drawn since the last flush into ``d`` (they are the next of ``idx``), taken from the
    front of ``got``: a guard giving up takes them from another thread while this one may append."""
    if got:
        items = got[:]
        del got[: len(items)]
        start = len(d.indices)
        add_many(d, idx[start : start + len(items)], items, tensor)


def _fit_budget(name: str, ds: Any, length: int, idx: list) -> list:
    """The indices to draw within the time budget: a few samples are timed, and when the budget
    has no room for every planned one, a smaller even random subset (never the first indices: a
    dataset sorted by class or date would look imbalanced or drifted). When the budget may still
    run out, the subset is drawn in a shuffled order, so what was drawn is a random subset too."""
    timed = idx[:: max(1, len(idx) // budget.TIMED)][: budget.TIMED]
    started = time.perf_counter()
    for i in timed:
        try:
            _get(name, ds, i)
        except Exception as exc:  # noqa: BLE001 - the user's __getitem__: reported with the index
            raise SampleError(name, i, exc) from exc
    per = (time.perf_counter() - started) / len(timed)
    planned = len(idx)
    room = budget.fit(planned, per)
    if room < planned:
        idx = sample_indices(length, room)
        budget.cut(f"{name}: about {per * 1e3:.0f} ms a sample, so {room} samples were planned instead of {planned}")
    if budget.may_run_out(len(idx), per):
        idx = list(idx)
        _random.Random(1).shuffle(idx)
    return idx


def _is_random(ds: Any, idx: list, probes: dict, split: str = "", times: int = T.RANDOM_AGAIN) -> Optional[bool]:
    """Draw a few indices again (each up to ``times`` times: a random flip gives the same image half
    the time): any difference means a random transform. None: the time budget ran out first."""
    for k, kept in probes.items():
        first = to_array(kept)
        for _ in range(times):
            if budget.spent():
                budget.cut(f"{split}: the randomness of its transforms was not decided")
                return None
            again = to_array(split_xy(_get(split, ds, idx[k]))[0])
            if first is None or again is None:
                break
            if first.shape != again.shape or not np.array_equal(first, again, equal_nan=True):
                return True
    return False


def redraw(ds: Any, index: int, times: int, split: str = "", out: Optional[list] = None, guard: Any = None) -> list:
    """``times`` more draws of one index (features only), RNG preserved. The generators are seeded
    by the index first: restored to the same state for every index, each would see the same random
    parameters, and every index would be blank in the same share of its draws. ``out``, ``guard``:
    filled as drawn, for ``stuck.bounded_list`` (a call that never returns)."""
    out = [] if out is None else out
    with preserved_rng(lambda: guard is None or not guard.abandoned):
        seed_all(T.REDRAW_SEED + (index if isinstance(index, int) else 0))
        for _ in range(times):
            x = to_array(split_xy(_get(split, ds, index))[0])
            with guard or _FREE:
                out.append(x)
    watch.idle()
    return out


def seeded_draws(
    ds: Any, indices: list, seed: int = 0, split: str = "", out: Optional[list] = None, guard: Any = None
) -> list:
    """Each index drawn with every generator seeded alike: a random transform takes the same
    parameters for every sample, so identical stored samples give identical features. ``out``,
    ``guard``: as for ``redraw``."""
    out = [] if out is None else out
    with preserved_rng(lambda: guard is None or not guard.abandoned):
        for i in indices:
            if budget.spent():
                budget.cut(f"{split}: {len(out)} of {len(indices)} samples were drawn again for duplicates")
                break
            seed_all(seed)
            x = to_array(split_xy(_get(split, ds, i))[0])
            with guard or _FREE:
                out.append(x)
    watch.idle()
    return out


def _draw_iterable(name: str, it: Any, max_samples: int, gallery: int = T.GALLERY_IMAGES) -> Draws:
    d = Draws(name, "iterable", it, gallery=gallery)
    stream = iter(it)
    tensor = tensor_type()
    for pos in range(max_samples):
        if pos and budget.spent():  # one sample at least: none would read as an empty split
            with _owned(d):
                budget.cut(f"{name}: the first {pos} samples of the iterable were drawn")
                d.cut = True
            break
        watch.note(name, "__iter__", pos)
        _tick()
        try:
            sample = next(stream)
        except StopIteration:
            break
        with _owned(d):
            add(d, pos, sample, tensor)
    with _owned(d):
        d.notes.append(f"{name}: the first {len(d.indices)} samples of the iterable")
    return d


def _draw_loader(
    name: str, loader: Any, max_batches: int, max_samples: int, gallery: int = T.GALLERY_IMAGES, raw: bool = False
) -> Draws:
    ds = loader.dataset
    d = Draws(name, "loader", loader, dataset=ds if is_map_style(ds) else None, gallery=gallery)
    d.reducer = Reducer(name, gallery)
    # the stored rows are hashed for every split: the batches' digests would not be read (duplicates._drawn
    # cannot draw a loader's samples again, so without ``raw`` for every split they are needed)
    d.reducer.s.hashed = not (raw and d.dataset is not None and has_raw_rows(d.dataset))
    if d.guard is not None:
        d.guard.batch_size = int(getattr(loader, "batch_size", None) or 1)
    try:
        d.length = len(ds)
    except TypeError:
        d.length = None
    if d.dataset is not None and d.length:
        try:
            first = _get(name, ds, 0)
        except Exception as exc:  # noqa: BLE001 - the user's __getitem__: reported with the index
            raise SampleError(name, 0, exc) from exc
        # the loader's transforms are the dataset's; only sample 0 is drawn here (the others may fail or
        # crash in a worker, where the check says so), so it is drawn again more times
        random = _is_random(ds, [0], {0: split_xy(first)[0]}, name, T.RANDOM_AGAIN_ONE)
        with _owned(d):
            d.random = random
    at = [0, 0]  # batches taken, samples taken: an error from the loader is about the next batch
    watch.note(name, "next-batch", number=0)  # iter() starts the workers: they know the split from here
    iterator = None
    try:
        iterator = iter(loader)
        fetcher = getattr(iterator, "_dataset_fetcher", None)
        if fetcher is not None:  # drawn in this process: each index noted, the batch kept if collate fails
            watch.watch_fetcher(fetcher, name)
        _take_batches(d, iterator, max_batches, max_samples, at)
    except Exception as exc:  # noqa: BLE001 - said in our words when we can; else as it was
        # torch's SIGCHLD handler raises a dead worker's RuntimeError wherever the main thread is:
        # in next(iterator), while a batch is taken in, between two batches or while iter() starts
        # the workers and fetches ahead; so every step of the draw is inside this try
        failure = _in_our_words(name, loader, iterator, at[0], exc)
        if failure is exc:
            raise
        raise failure from exc
    finally:
        _shutdown(iterator)
        watch.forget_failure()
    where = "dataset indices (sequential sampler)" if sequential(loader) else "positions in the loader's stream"
    with _owned(d):
        d.notes.append(
            f"{name}: {len(d.indices)} samples from the first batches of the DataLoader; numbers are {where}"
        )
    return d


def _take_batches(d: Draws, iterator: Any, max_batches: int, max_samples: int, at: list) -> None:
    """The loader's first batches into ``d``, within the budget; ``at`` counts the batches and
    samples taken so far (read by the caller when the loader raises)."""
    name = d.name
    while at[0] < max_batches and at[1] < max_samples:
        if at[0] and budget.spent():  # one batch at least; a loader's batches are a prefix anyway
            with _owned(d):
                budget.cut(f"{name}: the first {at[0]} batches of the DataLoader were drawn")
                d.cut = True
            return
        watch.note(name, "next-batch", number=at[0])
        _tick(False)
        try:
            batch = next(iterator)
        except StopIteration:
            return
        with _owned(d):
            at[1] = _take_batch(d, at[0], batch, at[1])
        at[0] += 1


def _in_our_words(name: str, loader: Any, iterator: Any, received: int, exc: BaseException) -> BaseException:
    """``loader_error``, once more for torch's SIGCHLD handler: it raises a dead worker's
    RuntimeError wherever the main thread is, so it can land while the first error is read."""
    try:
        return loader_error(name, loader, iterator, received, exc)
    except RuntimeError as late:
        return loader_error(name, loader, iterator, received, late)


def _take_batch(d: Draws, b: int, batch: Any, pos: int) -> int:
    """One batch into ``d``; the next position in the stream."""
    x, y, how = split_xy(batch, describe=b == 0)  # the first batch's description is kept
    xa, ya = to_array(x), to_array(y) if y is not None else None
    if b == 0:
        d.how, d.x_dtype = how, dtype_name(x)
        d.y_dtype = dtype_name(y) if y is not None else ""
        d.batch_shape = tuple(xa.shape) if xa is not None else None
    if xa is not None and not xa.ndim:
        xa = None  # one number for the whole batch: no per-sample features in it
    xa, ya = _batch_first(d, xa, ya, pos)
    n = len(xa) if xa is not None else _batch_len(batch, x, y)
    if d.reducer is None:
        d.reducer = Reducer(d.name, d.gallery)
    if xa is not None and n:
        d.reducer.add_batch(list(range(pos, pos + n)), xa)
    d.indices += range(pos, pos + n)
    d.numeric += n if xa is not None else 0  # unreadable features are counted, not checked: engine says so
    labels = list(ya) if ya is not None and ya.ndim and len(ya) == n else _box_targets(y, n)
    d.ys += labels  # numpy scalars or arrays
    pos += n
    return pos


def _batch_first(d: Draws, xa: Any, ya: Any, pos: int) -> tuple:
    """Integer token batches ``[seq_len, batch]`` (``pad_sequence``'s default batch_first=False, the
    layout nn.LSTM/GRU/Transformer take by default) as ``[batch, seq_len]``: read as they come, each
    time step is a "sample" (the <sos> row of every batch a duplicate). Only when dim 1, not dim 0,
    holds the batch's sample count (once seen, dim 0 may equal it too: a seq_len equal to it)."""
    n = _batch_count(d.obj, pos)
    if n is None or xa is None or xa.ndim < 2 or xa.dtype.kind not in "iu" or xa.shape[1] != n:
        return xa, ya
    if xa.shape[0] == n and not d.seq_first:
        return xa, ya  # square: an ordinary batch-first batch as likely
    if not d.seq_first:
        d.seq_first = True
        d.notes.append(f"{d.name}: batches are [seq_len, batch] (pad_sequence's default): read as batch-first")
    if ya is not None and ya.ndim >= 2 and ya.shape[1] == n and ya.shape[0] != n:
        ya = ya.swapaxes(0, 1)  # seq2seq targets padded the same way
    return xa.swapaxes(0, 1), ya


def _batch_count(loader: Any, pos: int) -> Optional[int]:
    """The samples the loader's batch at stream position ``pos`` holds: its batch size, or the samples
    left for the last batch (when the sampler's length is known); None without a batch size."""
    size = getattr(loader, "batch_size", None)
    if not isinstance(size, int) or size < 1:
        return None
    try:
        total = len(loader.sampler)
    except (TypeError, AttributeError, NotImplementedError):
        return size
    return min(size, total - pos) if total > pos else size


def _batch_len(batch: Any, x: Any, y: Any) -> int:
    """The samples in a batch whose features are no numeric array (file names first, a list of
    crops): the first field whose length is the batch's, the features and the label first. Counted
    as 0, a loader of ``(path, image, label)`` samples read as an empty split."""
    rest: list = []
    if isinstance(batch, dict):
        rest = list(batch.values())
    elif isinstance(batch, (list, tuple)):
        rest = list(batch)
    return next((k for k in map(_field_len, [x, y, *rest]) if k is not None), 0)


def _field_len(field: Any) -> Optional[int]:
    """A collated field's batch size, or None when its length is not that. The default collate
    makes a list of per-sample strings or numbers from a str field, but a list of batched tensors
    (one per position) from a list field: that list's length is the views', not the samples'."""
    if isinstance(field, (list, tuple)):
        if field and all(isinstance(v, (str, bytes, int, float)) for v in field):
            return len(field)
        return None
    shape = getattr(field, "shape", None)
    return int(shape[0]) if shape else None


def _box_targets(y: Any, n: int) -> list:
    """One detection target per sample of a batch whose labels are a list or tuple of per-image
    target dicts (DETR's collate), each as its box labels; else one None per sample."""
    if isinstance(y, (list, tuple)) and len(y) == n:
        boxes = [box_labels(t) for t in y]
        if all(b is not None for b in boxes):
            return boxes
    return [None] * n


def _shutdown(iterator: Any) -> None:
    stop: Optional[Callable] = getattr(iterator, "_shutdown_workers", None)
    if stop is not None:
        try:
            stop()
        except Exception:  # noqa: BLE001 - a loader that cannot stop its workers must not fail the check
            pass
