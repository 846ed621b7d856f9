"""A bounded gallery of one split's images for the editor's grid (worker side, numpy).

The editor draws the images itself, from raw pixels in the result (no PIL in the user's
environment, nothing but numbers through the webview's CSP). The reducer offers every stacked
chunk of image-like samples (``chw``, ``hwc``, ``hw`` layouts); the gallery keeps:

- the first ``GALLERY_IMAGES`` samples in drawing order (a batch as the model sees it, after the
  dataset's transforms), each reduced to at most ``GALLERY_SIDE`` pixels a side by block means;
- up to a quarter of them replaced by later blank samples, so a rare blank draw still shows.

``to_json`` turns them into ``uint8`` values for display, H x W x C row-major (C is 1 or 3), sent as
one base64 string per image (``pixels``; the page decodes it): a JSON list of 98k small ints for 32
CIFAR images took 12 ms to dump and 450 kB, the 128 images the editor asks for 108 ms and 1.8 MB
with the worker's sanitising walk, against under 1 ms and a third of the bytes as base64. uint8
data as it is, data within [0, 1] times 255, anything else (normalised data) with each channel's
range over the kept images stretched to 0..255, which undoes a ``Normalize`` for the eye. NaN/Inf
pixels are drawn black and the image is marked ``nonfinite``.
"""

from __future__ import annotations

import base64
from typing import Any, Callable, Optional

import numpy as np

from . import thresholds as T
from .histograms import Histograms

IMAGE_LAYOUTS = ("chw", "hwc", "hw")


def channels_first(x: np.ndarray, layout: str) -> np.ndarray:
    """Samples (first axis) as N x C x H x W views with C = 1 or 3 (a 2-channel image shows its
    first, RGBA its RGB)."""
    if layout == "hwc":
        x = x.transpose(0, 3, 1, 2)
    elif layout == "hw":
        x = x[:, None]
    channels = x.shape[1]
    if channels == 2:
        x = x[:, :1]
    elif channels >= 4:
        x = x[:, :3]
    return x


def downsample(x: np.ndarray, side: int = T.GALLERY_SIDE, out: Optional[np.ndarray] = None) -> np.ndarray:
    """N x C x H x W as float32 at most ``side`` a side: means over k x k blocks (k the smallest
    whole factor that fits), so a thin stroke stays visible where every k-th pixel would drop it.
    All the samples of a chunk at once: one per sample (and channels last) cost ~11 us each, 1.4 ms
    of the 128 images the editor asks for. Written into ``out`` (any strides, of the right shape:
    ``reduced_side``) when given, else a new array."""
    h, w = x.shape[2:]
    hh, ww, k = reduced_side(h, w, side)
    if k == 1:
        picked = x
    elif h < k or w < k:  # a thin strip: take rows/columns by stride
        picked = x[:, :, :: max(1, h // hh), :: max(1, w // ww)][:, :, :hh, :ww]
    else:
        blocks = x[:, :, : hh * k, : ww * k].reshape(x.shape[0], x.shape[1], hh, k, ww, k)
        return blocks.mean(axis=(3, 5), dtype=np.float32, out=out)
    if out is None:
        return np.array(picked, dtype=np.float32)
    np.copyto(out, picked, casting="unsafe")
    return out


def reduced_side(h: int, w: int, side: int = T.GALLERY_SIDE) -> tuple:
    """(height, width, k) of an h x w image once ``downsample`` has reduced it by k."""
    k = max(1, -(-max(h, w) // side))
    if k == 1:
        return h, w, 1
    return max(1, h // k), max(1, w // k), k


def _to_uint8(planes: np.ndarray, finite: Optional[np.ndarray], low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Each channel's row mapped from [low, high] to 0..255, rounded; NaN/Inf as ``low`` (black).

    ``planes`` is left as it is: the work runs on one copy, float32 unless a channel's span does not
    fit in float32 (then float64): 128 CIFAR images took 5 ms in float64 temporaries, ~1 ms this way."""
    wide = not np.all(high - low < np.finfo(np.float32).max)
    dtype = np.float64 if wide else np.float32
    work = np.subtract(planes, low[:, None].astype(dtype), dtype=dtype)
    if finite is not None:
        work[~finite] = 0.0  # low - low: black
    work *= (255.0 / (high - low))[:, None].astype(dtype)
    np.rint(work, out=work)
    np.clip(work, 0, 255, out=work)
    return work.astype(np.uint8)


def channels_last(planes: np.ndarray) -> np.ndarray:
    """c x N x h x w uint8 as N x h x w x c (the page's order): one strided copy per channel (numpy's
    transposing copy went a byte at a time, ~5x slower for 128 CIFAR images)."""
    c, n, h, w = planes.shape
    out = np.empty((n, h, w, c), np.uint8)
    for ch in range(c):
        out[..., ch] = planes[ch]
    return out


def base64_rows(rows: np.ndarray) -> list:
    """The base64 text of each row of a 2-D uint8 array. When a row is a whole number of 3-byte
    groups (a 32 x 32 RGB image is), base64 of the joined rows is the rows' texts joined: one
    encoding, then slices (128 CIFAR images: ~0.1 ms, against ~0.3 ms one by one)."""
    n, per = rows.shape
    if per % 3 or not n:
        return [base64.b64encode(row.tobytes()).decode("ascii") for row in rows]
    whole = base64.b64encode(np.ascontiguousarray(rows).tobytes()).decode("ascii")
    step = per // 3 * 4
    return [whole[k * step : (k + 1) * step] for k in range(n)]


def box_caption(ids: Any, shown: int = 6) -> str:
    """The label under a detection image: its box count and class ids, as the label histogram
    counts them (the ids as they are: a detection dataset's ids need not index its classes)."""
    values = sorted(int(v) for v in np.asarray(ids).ravel())
    head = ", ".join(str(v) for v in values[:shown]) + (", ..." if len(values) > shown else "")
    return f"{len(values)} {'box' if len(values) == 1 else 'boxes'}" + (f": {head}" if values else "")


class Gallery:
    """The kept samples of one split (see the module docstring)."""

    def __init__(self, layout: str, dtype: np.dtype, limit: int = T.GALLERY_IMAGES) -> None:
        self.layout = layout
        self.uint8 = dtype == np.uint8
        self.limit = max(0, int(limit))
        self.max_blank = max(1, self.limit // 4) if self.limit else 0
        self.items: list = []  # [order, index, row of planes, blank]
        # the kept images, written once where they will be read: c x limit x h x w float32 (one plane
        # per channel), so to_json scales long rows with no stacking copy (a gallery sees one shape:
        # the reducer keeps one per sample shape)
        self.planes: Optional[np.ndarray] = None
        self.seen = 0
        self.histograms = Histograms(layout)  # per-channel value histograms (histograms.py)

    def offer(self, idx: list, x: np.ndarray, blank_positions: list) -> None:
        """One stacked chunk (samples first) and the positions in it that the reducer found blank."""
        if not self.limit:
            return
        self.histograms.offer(x)
        blank = set(blank_positions)
        room = self.limit - len(self.items)
        if room > 0:
            taken = min(room, len(idx))
            start = len(self.items)
            self._keep(x[:taken], start)
            for p in range(taken):
                self.items.append([self.seen + p, idx[p], start + p, p in blank])
        for p in sorted(blank):
            if p < room or sum(1 for it in self.items if it[3]) >= self.max_blank:
                continue
            last = next((k for k in range(len(self.items) - 1, -1, -1) if not self.items[k][3]), None)
            if last is None:
                break
            row = self.items[last][2]
            self._keep(x[p : p + 1], row)
            self.items[last] = [self.seen + p, idx[p], row, True]
        self.seen += len(idx)

    def _keep(self, samples: np.ndarray, row: int) -> None:
        """Samples of a chunk as they will be shown (C x h x w float32 each), copied into the planes
        from ``row`` on."""
        x = channels_first(np.asarray(samples), self.layout)
        planes = self._make_room(x, row + len(x))
        downsample(x, out=planes[:, row : row + len(x)].transpose(1, 0, 2, 3))

    def _make_room(self, x: np.ndarray, rows: int) -> np.ndarray:
        """Planes of at least ``rows`` rows: grown by doubling up to ``limit``, never allocated for
        more images than were offered (``galleryImages`` is an option: a huge one costs nothing)."""
        have = 0 if self.planes is None else self.planes.shape[1]
        if self.planes is not None and rows <= have:
            return self.planes
        size = min(self.limit, max(rows, 2 * have, T.GALLERY_IMAGES))
        h, w, _ = reduced_side(*x.shape[2:])
        grown = np.empty((x.shape[1], size, h, w), np.float32)
        if self.planes is not None:
            grown[:, :have] = self.planes
        self.planes = grown
        return grown

    def to_json(self, label_of: Callable[[Any], Optional[str]], shape: tuple) -> Optional[dict]:
        if not self.items or self.planes is None:
            return None
        items = sorted(self.items, key=lambda it: it[0])
        rows = [it[2] for it in items]
        n = len(rows)
        # the rows in drawing order: as kept unless a blank sample took an earlier one's row
        kept = self.planes[:, :n] if rows == list(range(n)) else self.planes[:, rows]
        c, _, h, w = kept.shape
        planes = kept.reshape(c, -1)
        lo, hi = planes.min(1).astype(np.float64), planes.max(1).astype(np.float64)
        # a NaN or an Inf shows in a channel's min or max: only then are the per-pixel masks needed
        finite = None if np.isfinite(lo).all() and np.isfinite(hi).all() else np.isfinite(planes)
        kind, low, high = self._scale(planes, finite, lo, hi)
        pixels = channels_last(_to_uint8(planes, finite, low, high).reshape(c, n, h, w))  # uint8, for display
        bad = np.zeros(n, bool) if finite is None else ~np.all(finite.reshape(c, n, -1), axis=(0, 2))
        texts = base64_rows(pixels.reshape(n, -1))  # uint8 H x W x C each
        images = []
        for k, it in enumerate(items):
            images.append(
                {
                    "index": it[1] if isinstance(it[1], (int, str)) else int(it[1]),
                    "label": label_of(it[1]),
                    "blank": bool(it[3]),
                    "nonfinite": bool(bad[k]),
                    "pixels": texts[k],
                }
            )
        return {
            "width": int(w),
            "height": int(h),
            "channels": int(c),
            "sourceShape": [int(v) for v in shape],
            "layout": self.layout,
            "scale": {"kind": kind, "low": [float(v) for v in low], "high": [float(v) for v in high]},
            "images": images,
            "drawn": self.seen,
            "histograms": self.histograms.to_json(),
        }

    def _scale(self, planes: np.ndarray, finite: Optional[np.ndarray], lo: np.ndarray, hi: np.ndarray) -> tuple:
        """(kind, low per channel, high per channel) that maps the values to 0..255. ``planes``: one row
        of values per channel; ``finite``: their finite mask, or None when every value is finite (``lo``,
        ``hi``: each channel's min, max)."""
        channels = planes.shape[0]
        if self.uint8:
            return "uint8", np.zeros(channels), np.full(channels, 255.0)
        if finite is not None:  # the min and max of the finite values
            values = [planes[ch][finite[ch]] for ch in range(channels)]
            lo = np.array([v.min() if v.size else 0.0 for v in values])
            hi = np.array([v.max() if v.size else 1.0 for v in values])
        if lo.min() >= 0.0 and hi.max() <= 1.0:
            return "unit", np.zeros(channels), np.ones(channels)
        span = hi - lo
        hi = np.where(span > 1e-12, hi, lo + 1.0)
        return "range", lo, hi
