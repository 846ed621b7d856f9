"""From the draws of one split to its statistics, in stacked chunks (worker side, numpy).

The layout of the features is read from the first sample's shape: ``chw`` (C, H, W with C at most
4), ``hwc`` (H, W, C: channels last), ``hw`` (one channel), ``vector`` (1-D, at most 4096 values),
``tokens`` (1-D integers), ``other`` (anything else, one channel). Samples of that shape are
stacked ``CHUNK`` at a time (fewer when they are big; a Dataset's rows of tensors into one reused
array, ``chunks.py``) and reduced as (samples, channels, values):
NaN/Inf, per-sample min/max/mean/std, blank samples, per-channel sums, a digest of each sample.
Samples of other shapes (images of several sizes, padded batches of several sizes) are reduced
apart, up to ``MAX_SHAPES`` shapes; the statistics are those of the shape with the most samples,
and ``other_shapes`` counts the rest.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from . import thresholds as T
from .arrays import BoxLabels, to_array
from .chunks import Chunk, chunk_for
from .fingerprint import fingerprints
from .gallery import IMAGE_LAYOUTS, Gallery
from .masks import is_mask, other_masks, presence

MAX_VECTOR = 4096
MAX_SHAPES = 8  # shapes reduced apart (padded batches of a few sizes); the statistics are of the most common
# 2 MB of float32 per chunk (170 CIFAR images): each chunk pays ~25 numpy calls, so 512 KB chunks
# (42 images) spent more on the calls than on the sums; bigger than the cache costs no more here
CHUNK_ELEMENTS = 1 << 19


@dataclass
class SplitStats:
    name: str
    layout: str = "none"
    shape: tuple = ()
    channels: int = 0
    sampled: int = 0
    indices: list = field(default_factory=list)  # the samples of the main shape, in order
    other_shapes: int = 0
    nonfinite: list = field(default_factory=list)
    no_finite: list = field(default_factory=list)  # samples with no finite value: all-NaN placeholders
    nonfinite_values: int = 0
    blank: list = field(default_factory=list)
    sample_means: Optional[np.ndarray] = None  # (samples, channels)
    ch_sum: Optional[np.ndarray] = None
    ch_sumsq: Optional[np.ndarray] = None
    ch_count: int = 0
    vmin: float = float("inf")
    vmax: float = float("-inf")
    integral: bool = True  # every finite value is a whole number
    vectors: Optional[np.ndarray] = None  # (samples, features) for the vector and tokens layouts
    digests: list = field(default_factory=list)  # per sample of the main shape (None: not hashable)
    labels: Optional[np.ndarray] = None  # one class index (or value) per labelled sample
    label_indices: list = field(default_factory=list)
    label_kind: Optional[str] = None  # "index" | "float" | "onehot" | "multi" | "boxes" | "other"
    label_width: int = 0  # "onehot": the rows' length
    token_labels: Optional[np.ndarray] = None  # "other" 1-D integer label rows: a target per token
    label_shape: tuple = ()  # one label's shape (the most common): (H, W) for a segmentation mask
    label_float: bool = False  # the labels' dtype is floating point
    mask_values: Optional[np.ndarray] = None  # integer H x W labels (masks.py): the values met ...
    mask_presence: Optional[np.ndarray] = None  # ... and which mask holds which (masks x values) ...
    mask_indices: list = field(default_factory=list)  # ... the masks' sample indices (every size)
    box_labels: Optional[np.ndarray] = None  # "boxes": every box's class id, over box_images images
    box_images: int = 0
    label_nonfinite: list = field(default_factory=list)
    float_kind: bool = False
    # "tokens": (index, ids) of the sequences of other lengths than the main shape's (a Dataset of unpadded
    # sentences: most of them), and of the target sequences of other lengths: the id checks read them too
    ragged: list = field(default_factory=list)
    ragged_labels: list = field(default_factory=list)
    hashed: bool = True  # digests of the drawn samples are computed (not when the stored rows are hashed instead)

    @property
    def ch_mean(self) -> Optional[np.ndarray]:
        return None if self.ch_sum is None or not self.ch_count else self.ch_sum / self.ch_count

    @property
    def ch_std(self) -> Optional[np.ndarray]:
        if self.ch_sum is None or self.ch_sumsq is None or not self.ch_count:
            return None
        mean = self.ch_sum / self.ch_count
        return np.sqrt(np.maximum(self.ch_sumsq / self.ch_count - mean * mean, 0.0))


def layout_of(shape: tuple, kind: str) -> str:
    if len(shape) == 3 and shape[0] <= 4 < min(shape[1], shape[2]):
        return "chw"
    if len(shape) == 3 and shape[2] <= 4 < min(shape[0], shape[1]):
        return "hwc"
    if len(shape) == 2 and min(shape) > 4:
        return "hw"
    if len(shape) == 1 and kind in "iub" and shape[0] >= 2:
        return "tokens"
    if len(shape) <= 1 and (not shape or shape[0] <= MAX_VECTOR):
        return "vector"
    return "other"


def _as_channels(x: np.ndarray, layout: str) -> np.ndarray:
    """(samples, channels, values) view of a stacked chunk."""
    k = x.shape[0]
    if layout == "chw":
        return x.reshape(k, x.shape[1], -1)
    if layout == "hwc":
        return x.reshape(k, -1, x.shape[-1]).transpose(0, 2, 1)
    if layout in ("vector", "tokens"):
        return x.reshape(k, -1, 1)
    return x.reshape(k, 1, -1)


class Reducer:
    """Statistics of one split, fed one sample at a time and reduced ``per_chunk`` at a time, so the
    draws are never all held at once."""

    def __init__(self, name: str, gallery: int = T.GALLERY_IMAGES) -> None:
        self.s = SplitStats(name)
        self.gallery_limit = gallery
        self.gallery: Optional[Gallery] = None  # images kept for the editor's grid (image layouts only)
        self.first: Optional[np.ndarray] = None
        self.pending: list = []
        self.means: list = []
        self.vectors: list = []
        self.per_chunk = T.CHUNK
        self.others: dict = {}  # shape -> Reducer of the samples of another shape (MAX_SHAPES at most)
        self.chunk: Optional[Chunk] = None  # a Dataset's rows of tensors, copied as they come (chunks.py)

    def add(self, index: Any, x: Any) -> None:
        """One sample's features: a numpy array, or a tensor. Nothing is checked per sample (each
        torch call costs about a tenth of a simple ``__getitem__``): a chunk is stacked at once, and
        only a chunk that does not stack is converted sample by sample."""
        if x is None or (self.first is None and not self._init(x)):
            return
        if self.chunk is not None and self.chunk.indices:  # held before this one: reduced first
            self._reduce(*self.chunk.take())
        self.pending.append((index, x))
        if len(self.pending) >= self.per_chunk:
            self._flush()

    def add_many(self, indices: list, xs: list) -> None:
        """``add`` of each, by list slices: the chunks (and so every sum) are those ``add`` makes."""
        k = 0
        while self.first is None and k < len(xs):  # until the first array is known: one at a time
            self.add(indices[k], xs[k])
            k += 1
        if k < len(xs) and self.s.layout not in ("vector", "tokens"):  # those keep views of their chunks
            k = self._into_chunk(indices, xs, k)
        while k < len(xs):
            take = min(len(xs) - k, self.per_chunk - len(self.pending))
            self.pending += zip(indices[k : k + take], xs[k : k + take])
            k += take
            if len(self.pending) >= self.per_chunk:
                self._flush()

    def _into_chunk(self, indices: list, xs: list, k: int) -> int:
        """``xs[k:]`` copied into the chunk array (chunks.py) and reduced each time it is full, with
        the samples held before them; where the rest (another shape or dtype) goes ``add``'s way."""
        if self.chunk is None:
            self.chunk = chunk_for(xs[k], self.s.shape, self.per_chunk)
        chunk = self.chunk
        if chunk is None:
            return k
        if self.pending:  # the split's first sample (``add``): taken into the chunk, or all go as before
            if not chunk.put([i for i, _ in self.pending], [a for _, a in self.pending]):
                return k
            self.pending = []
        while k < len(xs):
            take = min(len(xs) - k, chunk.room)
            if not chunk.put(indices[k : k + take], xs[k : k + take]):
                self._reduce(*chunk.take())  # those held first, in drawing order
                return k
            k += take
            if not chunk.room:
                self._reduce(*chunk.take())
        return k

    def _init(self, x: Any) -> bool:
        first = to_array(x)
        if first is None:
            return False
        s = self.s
        self.first = first
        s.shape, s.float_kind = tuple(first.shape), first.dtype.kind == "f"
        s.layout = layout_of(s.shape, first.dtype.kind)
        self.per_chunk = max(1, min(T.CHUNK, CHUNK_ELEMENTS // max(1, first.size)))
        if s.layout in IMAGE_LAYOUTS and self.gallery_limit > 0:
            self.gallery = Gallery(s.layout, first.dtype, self.gallery_limit)
        return True

    def add_batch(self, indices: list, x: np.ndarray) -> None:
        """A DataLoader's batch, already one array: reduced in slices, never split into samples."""
        if not len(indices) or (self.first is None and not self._init(x[0])):
            return
        self._flush()
        if x.shape[1:] != self.s.shape:
            if self.s.layout == "tokens" and x.ndim == 2 and x.dtype.kind in "iu":
                self.s.ragged += zip(indices, x)
            other = self._other(tuple(x.shape[1:]))
            if other is not None:
                other.add_batch(indices, x)
            self.s.other_shapes += len(indices)
            return
        for start in range(0, len(indices), self.per_chunk):
            self._reduce(list(indices[start : start + self.per_chunk]), x[start : start + self.per_chunk])

    def _stack(self, part: list) -> tuple:
        """(indices, stacked features) of the samples of the main shape; the others are counted."""
        items = [a for _, a in part]
        torch = sys.modules.get("torch")
        try:
            if torch is not None and isinstance(items[0], torch.Tensor):
                with torch.no_grad():
                    x = to_array(torch.stack(items))
            else:
                x = np.stack(items)
            if x is not None and x.shape[1:] == self.s.shape:
                return [i for i, _ in part], x
        except (RuntimeError, TypeError, ValueError):
            pass
        keep = []
        for i, a in part:  # shapes, dtypes or devices differ: one at a time
            arr = to_array(a)
            if arr is not None and arr.shape == self.s.shape:
                keep.append((i, arr))
            elif arr is not None:
                if self.s.layout == "tokens" and arr.ndim == 1 and arr.dtype.kind in "iu":
                    self.s.ragged.append((i, arr))
                other = self._other(tuple(arr.shape))
                if other is not None:
                    other.add(i, arr)
                self.s.other_shapes += 1
        if not keep:
            return [], None
        return [i for i, _ in keep], np.stack([a for _, a in keep])

    def _other(self, shape: tuple) -> Optional["Reducer"]:
        """The reducer of the samples of ``shape`` (not the first sample's), None past MAX_SHAPES."""
        other = self.others.get(shape)
        if other is None and len(self.others) < MAX_SHAPES - 1:
            other = self.others[shape] = Reducer(self.s.name, self.gallery_limit)
            other.s.hashed = self.s.hashed
        return other

    def _main(self) -> "Reducer":
        """The reducer whose shape has the most samples (the first sample's on a tie)."""
        best = self
        for other in self.others.values():
            other._flush()
            if other.s.sampled > best.s.sampled:
                best = other
        if best is not self:
            if self.s.layout == "tokens":  # the first shape's sequences are ragged ones now
                mine = list(zip(self.s.indices, np.concatenate(self.vectors))) if self.vectors else []
                best.s.ragged = [(i, a) for i, a in self.s.ragged if a.shape != best.s.shape] + mine
            total = self.s.sampled + self.s.other_shapes
            best.s.other_shapes = total - best.s.sampled
            self.s, self.gallery, self.means, self.vectors = best.s, best.gallery, best.means, best.vectors
        self.others = {}
        return self

    def _flush(self) -> None:
        if self.chunk is not None and self.chunk.indices:
            self._reduce(*self.chunk.take())
        if not self.pending or self.first is None:
            return
        part, self.pending = self.pending, []
        idx, x = self._stack(part)
        if x is not None:
            self._reduce(idx, x)

    def _reduce(self, idx: list, x: np.ndarray) -> None:
        assert self.first is not None
        x = x.astype(self.first.dtype, copy=False) if x.dtype.kind == self.first.dtype.kind else x
        self.s.indices += idx
        self.s.sampled += len(idx)
        blank_before = len(self.s.blank)
        self.means.append(_chunk(self.s, idx, x))
        if self.gallery is not None:
            new = set(self.s.blank[blank_before:])
            self.gallery.offer(idx, x, [p for p, i in enumerate(idx) if i in new] if new else [])
        if self.s.layout in ("vector", "tokens"):
            self.vectors.append(x.reshape(len(idx), -1))

    def finish(self, draws: Any) -> SplitStats:
        self._flush()
        self.chunk = None  # its array is not read again
        self._main()
        s = self.s
        _labels(s, draws)
        s.sample_means = np.concatenate(self.means) if self.means else None
        if self.vectors:
            s.vectors = np.concatenate(self.vectors)
        return s


def reduce(draws: Any) -> SplitStats:
    """The statistics of finished draws (``draws.reducer`` was fed while drawing)."""
    if draws.reducer is None:
        draws.reducer = Reducer(draws.name)
    return draws.reducer.finish(draws)


def _finite_counts(s: SplitStats, idx: list, c: np.ndarray, sums: np.ndarray) -> tuple:
    """(values with NaN/Inf zeroed, finite count per sample and channel - an int when all are - , sums):
    NaN and Inf reach the sum, so only a chunk whose sums are not finite pays for the elementwise test."""
    if c.dtype.kind != "f" or np.isfinite(sums).all():
        return c, c.shape[2], sums  # every value: the count is the values per channel, one int
    finite = np.isfinite(c)
    bad = ~finite.all(axis=(1, 2))
    s.nonfinite += [i for i, b in zip(idx, bad) if b]
    s.no_finite += [i for i, b in zip(idx, ~finite.any(axis=(1, 2))) if b]
    s.nonfinite_values += int((~finite).sum())
    c = np.where(finite, c, 0)
    return c, finite.sum(axis=2), c.sum(axis=2, dtype=np.float64)


def _chunk(s: SplitStats, idx: list, x: np.ndarray) -> np.ndarray:
    """Reduce one stacked chunk into ``s``; the per-sample channel means."""
    c = _as_channels(x, s.layout)
    if c.dtype != np.float32 and c.dtype != np.float64:
        c = c.astype(np.float32)  # BLAS sums below; integers and halves as float32
    k, channels, per = c.shape
    s.channels = channels
    # sums and sums of squares as matrix products (BLAS): 3-5x faster than ndarray.sum(dtype=float64).
    # Per sample (3-D matmul), not one 2-D product of the chunk: that one was 3x faster alone, but big
    # enough for OpenBLAS's thread pool, whose spinning threads took the check to 3.15x the plain
    # loop's CPU time (bench_data_checks.py, 2026-12-03)
    # the sums as a batched product too: (k, channels, 1, per) @ (per, 1) ran in 0.7x the time of the
    # matrix-vector ``c @ ones`` on CIFAR chunks
    sums = np.matmul(c[:, :, None, :], np.ones((per, 1), c.dtype))[:, :, 0, 0].astype(np.float64)
    c, count, sums = _finite_counts(s, idx, c, sums)
    sq = np.matmul(c[:, :, None, :], c[:, :, :, None])[:, :, 0, 0].astype(np.float64)
    # the ufuncs' reduce, not ndarray.min/max: each of those goes through a Python wrapper first, and a
    # DataLoader's check reduces one chunk per batch (~25 numpy calls each: their overhead counts)
    lo, hi = np.minimum.reduce(c, axis=(1, 2)), np.maximum.reduce(c, axis=(1, 2))
    top = float(hi.max())
    s.vmin, s.vmax = min(s.vmin, float(lo.min())), max(s.vmax, top)
    if s.integral and x.dtype.kind == "f" and top > T.UINT8_LOW:  # only 0..255 floats ask
        s.integral = bool(np.all(c == np.round(c)))
    s.ch_sum = sums.sum(0) if s.ch_sum is None else s.ch_sum + sums.sum(0)
    s.ch_sumsq = sq.sum(0) if s.ch_sumsq is None else s.ch_sumsq + sq.sum(0)
    whole = type(count) is int  # every value finite
    s.ch_count += (k * count if whole else int(count[:, 0].sum())) if channels else 0
    mean = sums.sum(1) / (max(channels * count, 1) if whole else np.maximum(count.sum(1), 1))
    if channels * per >= T.BLANK_MIN_ELEMENTS and s.layout != "tokens":
        blank = _blank_rows(c, lo, hi, mean, s.layout)
        if not whole:  # a sample of NaN only, zeroed above, is nonfinite, not also blank (as is_blank says)
            blank &= count.sum(1) > 0
        s.blank += [idx[p] for p in np.flatnonzero(blank).tolist()]
    if s.hashed:
        s.digests += fingerprints(x)
    return sums / np.maximum(count, 1)


def _blank_rows(c: np.ndarray, lo: np.ndarray, hi: np.ndarray, mean: np.ndarray, layout: str):
    span = hi - lo
    blank = span <= T.BLANK_STD * (1 + np.abs(mean))
    if layout == "vector":  # a sparse feature vector (bag of words) is mostly zeros by design
        return blank
    # BLANK_SHARE of the values at the min (or the max) puts the mean within (1 - BLANK_SHARE) of the
    # range from it: only those candidates are counted
    near = (1 - T.BLANK_SHARE) * span + 1e-12
    candidates = np.flatnonzero(((mean - lo) <= near) | ((hi - mean) <= near))
    if candidates.size:
        flat = c[candidates].reshape(len(candidates), -1)
        share = np.maximum((flat == lo[candidates, None]).mean(1), (flat == hi[candidates, None]).mean(1))
        blank[candidates[share >= T.BLANK_SHARE]] = True
    return blank


def is_blank(x: Optional[np.ndarray], layout: str = "chw") -> bool:
    """The same test as in a chunk, for one array (a redraw)."""
    if x is None or x.size < T.BLANK_MIN_ELEMENTS or layout == "tokens":
        return False
    v = x.astype(np.float64, copy=False).ravel()
    v = v[np.isfinite(v)]
    if not v.size:
        return False
    lo, hi, mean = v.min(), v.max(), v.mean()
    if hi - lo <= T.BLANK_STD * (1 + abs(mean)):
        return True
    return layout != "vector" and bool(max((v == lo).mean(), (v == hi).mean()) >= T.BLANK_SHARE)


def blank_rows(x: np.ndarray, layout: str = "chw") -> np.ndarray:
    """``is_blank`` of each row of ``x`` (samples along the first axis, one shape), the rows whose values
    are all finite at once (each one's numpy calls cost ~20 us a sample); the others one at a time."""
    k = len(x)
    out = np.zeros(k, bool)
    if not k or x[0].size < T.BLANK_MIN_ELEMENTS or layout == "tokens":
        return out
    v = x.reshape(k, -1).astype(np.float64)
    finite = np.isfinite(v).all(1)
    with np.errstate(invalid="ignore"):  # inf - inf in a row that is not all finite: decided below
        lo, hi, mean = v.min(1), v.max(1), v.mean(1)
        out = (hi - lo) <= T.BLANK_STD * (1 + np.abs(mean))
    if layout != "vector":
        out |= np.maximum((v == lo[:, None]).mean(1), (v == hi[:, None]).mean(1)) >= T.BLANK_SHARE
    for i in np.flatnonzero(~finite).tolist():  # NaN/Inf: the test is of the finite values alone
        out[i] = is_blank(x[i], layout)
    return out


def _scalar_labels(ys: list) -> Optional[np.ndarray]:
    """Every label in one array when each is a plain number or a 0-d tensor (the common class
    index), else None. One array, not one per label: 2,000 0-d arrays cost ~2 ms per split.
    numpy scalars count only when numbers or bools: a numpy string (a name read from an array)
    would make a text array that the float conversion later fails on."""
    met = set(map(type, ys))  # the types met, asked once each (not per label: ~0.3 us a label)
    if ys and all(t in (int, float, bool) or issubclass(t, (np.number, np.bool_)) for t in met):
        return np.asarray(ys)
    torch = sys.modules.get("torch")
    if torch is not None and ys and all(isinstance(y, torch.Tensor) and y.dim() == 0 for y in ys):
        try:
            return torch.stack(ys).detach().cpu().numpy()
        except (RuntimeError, TypeError):
            pass
    return None


def _label_rows(indices: list, ys: list) -> Optional[tuple]:
    """(indices, one array of the labels of the most common shape) - the others are left out -
    or None when no label is numeric."""
    arr = _scalar_labels(ys)
    if arr is not None:
        return list(indices), arr
    arrays = (None if y is None else to_array(y) for y in ys)
    pairs = [(i, np.asarray(a)) for i, a in zip(indices, arrays) if a is not None]
    if not pairs:
        return None
    shape = Counter(a.shape for _, a in pairs).most_common(1)[0][0]
    pairs = [(i, a) for i, a in pairs if a.shape == shape]
    return [i for i, _ in pairs], np.stack([a for _, a in pairs])


def _labels(s: SplitStats, draws: Any) -> None:
    met = set(map(type, draws.ys))
    boxed = any(issubclass(t, BoxLabels) for t in met)  # else no label is a detection target: no pass
    boxes = [(i, y) for i, y in zip(draws.indices, draws.ys) if isinstance(y, BoxLabels)] if boxed else []
    if boxes and 2 * len(boxes) >= len(draws.ys):
        # detection targets: several class ids per image, one per box (labels.py: histogram only)
        s.label_kind, s.box_images = "boxes", len(boxes)
        s.label_indices = [i for i, _ in boxes]
        s.box_labels = np.concatenate([y.ids for _, y in boxes]) if boxes else np.zeros(0, np.int64)
        return
    ys = [None if isinstance(y, BoxLabels) else y for y in draws.ys] if boxes else draws.ys
    found = _label_rows(draws.indices, ys)
    if found is None:
        return
    s.label_indices, arr = found
    shape = s.label_shape = arr.shape[1:]
    s.label_float = arr.dtype.kind == "f"
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr.reshape(len(arr), -1)).all(1)
        s.label_nonfinite = [i for i, b in zip(s.label_indices, bad) if b]
    size = int(np.prod(shape)) if shape else 1
    if shape == (1,) and any(a is not None and a.size > 1 for a in map(to_array, ys)):  # others longer: lists
        s.label_kind = "other"  # of ids (an image's tags), one id for some, not a class each (an empty one: a class)
        return
    if size == 1:
        flat = arr.reshape(-1)
        s.label_kind = "index" if arr.dtype.kind in "iub" else "float"
        s.labels = flat.astype(np.float64)
        return
    if len(shape) == 1 and arr.dtype.kind in "iubf":
        rows = arr.astype(np.float64)
        binary = np.isin(rows, (0.0, 1.0)).all()
        if binary and np.all(rows.sum(1) == 1):
            s.label_kind, s.labels = "onehot", rows.argmax(1).astype(np.float64)
            s.label_width = int(shape[0])
            return
        s.label_kind = "multi" if binary else "other"
        if s.label_kind == "other" and arr.dtype.kind in "iu":
            s.token_labels = arr  # a target id per token (a language model's): sequences.py reads its masking
            s.ragged_labels = _ragged_rows(draws, shape)
        return
    s.label_kind = "other"
    if is_mask(arr):  # masks of other sizes too (an evaluation split resized, not cropped), read once here
        arrays = (None if y is None or isinstance(y, BoxLabels) else to_array(y) for y in ys)
        extra = other_masks(draws.indices, list(arrays), arr.shape[1:])
        s.mask_indices = s.label_indices + [i for i, _ in extra]
        s.mask_values, s.mask_presence = presence(arr, [m for _, m in extra])


def _ragged_rows(draws: Any, shape: tuple) -> list:
    """(index, ids) of the 1-D integer labels whose length is not ``shape``'s (target sentences of other
    lengths), read once at the split's end."""
    out = []
    for i, y in zip(draws.indices, draws.ys):
        a = None if y is None or isinstance(y, BoxLabels) else to_array(y)
        if a is not None and a.ndim == 1 and a.shape != shape and a.dtype.kind in "iu":
            out.append((i, a))
    return out
