"""From the draws of one split to its statistics, in stacked chunks (worker side, numpy).

The layout of the features is read from the first sample's shape: ``chw`` (C, H, W with C at most
4), ``hwc`` (H, W, C: channels last), ``hw`` (one channel), ``vector`` (1-D, at most 4096 values),
``tokens`` (1-D integers), ``other`` (anything else, one channel). Samples of that shape are
stacked ``CHUNK`` at a time (fewer when they are big) and reduced as (samples, channels, values):
NaN/Inf, per-sample min/max/mean/std, blank samples, per-channel sums, a digest of each sample.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from . import thresholds as T

MAX_VECTOR = 4096
CHUNK_ELEMENTS = 1 << 24


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
    label_kind: Optional[str] = None  # "index" | "float" | "onehot" | "multi" | "other"
    label_nonfinite: list = field(default_factory=list)
    float_kind: bool = False

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


def reduce(draws: Any) -> SplitStats:
    s = SplitStats(draws.name)
    first = next((x for x in draws.xs if x is not None), None)
    _labels(s, draws)
    if first is None:
        return s
    s.shape, s.float_kind = tuple(first.shape), first.dtype.kind == "f"
    s.layout = layout_of(s.shape, first.dtype.kind)
    same = [(i, x) for i, x in zip(draws.indices, draws.xs) if x is not None and x.shape == first.shape]
    s.other_shapes = sum(1 for x in draws.xs if x is not None) - len(same)
    s.sampled = len(same)
    s.indices = [i for i, _ in same]
    per_chunk = max(1, min(T.CHUNK, CHUNK_ELEMENTS // max(1, first.size)))
    means, vectors = [], []
    for start in range(0, len(same), per_chunk):
        part = same[start : start + per_chunk]
        x = np.stack([a for _, a in part]).astype(first.dtype, copy=False)
        means.append(_chunk(s, [i for i, _ in part], x))
        if s.layout in ("vector", "tokens"):
            vectors.append(x.reshape(len(part), -1))
    s.sample_means = np.concatenate(means) if means else None
    if vectors:
        s.vectors = np.concatenate(vectors)
    return s


def _chunk(s: SplitStats, idx: list, x: np.ndarray) -> np.ndarray:
    c = _as_channels(x, s.layout)
    k, channels, per = c.shape
    s.channels = channels
    if x.dtype.kind == "f":
        finite = np.isfinite(c)
        bad = ~finite.all(axis=(1, 2))
        if bad.any():
            s.nonfinite += [i for i, b in zip(idx, bad) if b]
            s.nonfinite_values += int((~finite).sum())
            c = np.where(finite, c, 0)
            count = finite.sum(axis=2)
        else:
            count = np.full((k, channels), per)
    else:
        count = np.full((k, channels), per)
    sums = c.sum(axis=2, dtype=np.float64)
    sq = np.einsum("kcp,kcp->kc", c, c, dtype=np.float64) if x.dtype.kind == "f" else (c.astype(np.float64) ** 2).sum(2)
    lo, hi = c.min(axis=(1, 2)), c.max(axis=(1, 2))
    s.vmin, s.vmax = min(s.vmin, float(lo.min())), max(s.vmax, float(hi.max()))
    if s.integral and x.dtype.kind == "f":
        s.integral = bool(np.all(c == np.round(c)))
    s.ch_sum = sums.sum(0) if s.ch_sum is None else s.ch_sum + sums.sum(0)
    s.ch_sumsq = sq.sum(0) if s.ch_sumsq is None else s.ch_sumsq + sq.sum(0)
    s.ch_count += int(count[:, 0].sum()) if channels else 0
    n = np.maximum(count.sum(1), 1)
    mean = sums.sum(1) / n
    std = np.sqrt(np.maximum(sq.sum(1) / n - mean * mean, 0.0))
    if channels * per >= T.BLANK_MIN_ELEMENTS and s.layout != "tokens":
        flat = c.reshape(k, -1)
        share = np.maximum((flat == lo[:, None]).mean(1), (flat == hi[:, None]).mean(1))
        blank = ((hi - lo) <= T.BLANK_STD * (1 + np.abs(mean))) | (std <= T.BLANK_STD * (1 + np.abs(mean)))
        if s.layout != "vector":  # a sparse feature vector (bag of words) is mostly zeros by design
            blank |= share >= T.BLANK_SHARE
        s.blank += [i for i, b in zip(idx, blank) if b]
    for j in range(k):
        s.digests.append(digest(x[j]))
    return sums / np.maximum(count, 1)


def digest(x: Optional[np.ndarray]) -> Optional[bytes]:
    if x is None:
        return None
    h = hashlib.blake2b(digest_size=16)
    h.update(repr((x.shape, x.dtype.str)).encode())
    h.update(np.ascontiguousarray(x).tobytes())
    return h.digest()


def is_blank(x: Optional[np.ndarray], layout: str = "chw") -> bool:
    """The same test as in a chunk, for one array (a redraw)."""
    if x is None or x.size < T.BLANK_MIN_ELEMENTS or layout == "tokens":
        return False
    v = x.astype(np.float64, copy=False).ravel()
    v = v[np.isfinite(v)]
    if not v.size:
        return False
    lo, hi, mean = v.min(), v.max(), v.mean()
    if hi - lo <= T.BLANK_STD * (1 + abs(mean)) or v.std() <= T.BLANK_STD * (1 + abs(mean)):
        return True
    return layout != "vector" and bool(max((v == lo).mean(), (v == hi).mean()) >= T.BLANK_SHARE)


def _labels(s: SplitStats, draws: Any) -> None:
    ys = [(i, y) for i, y in zip(draws.indices, draws.ys) if y is not None]
    if not ys:
        return
    shapes = Counter(y.shape for _, y in ys)
    shape = shapes.most_common(1)[0][0]
    ys = [(i, y) for i, y in ys if y.shape == shape]
    s.label_indices = [i for i, _ in ys]
    arr = np.stack([y for _, y in ys])
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr.reshape(len(arr), -1)).all(1)
        s.label_nonfinite = [i for i, b in zip(s.label_indices, bad) if b]
    size = int(np.prod(shape)) if shape else 1
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
            return
        s.label_kind = "multi" if binary else "other"
        return
    s.label_kind = "other"
