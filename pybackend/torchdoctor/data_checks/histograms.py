"""Per-channel histograms of one split's image values for the editor's view (worker side, numpy).

The gallery (``gallery.py``) is offered every stacked chunk of image-like samples the reducer
sees; it hands them here too. The histograms are of the raw values as the model gets them (after
the dataset's transforms, before the gallery's block means and display scaling, which would hide
saturation and the 0..255 vs 0..1 range the eye is looking for).

The cost is bounded whatever the split's size: only the first ``SAMPLES`` samples are read, each
at most ``PER_SAMPLE`` values per channel (an even stride through the pixels), so at most
``SAMPLES * PER_SAMPLE`` values per channel are held (256 KB of float32 a channel: 65,536 values,
far more than 32 bars need; 131,072 cost a 2,000-image check ~0.5 ms more for the same bars).
At the end each channel gets ``BINS`` equal bins over its observed range (the min..max of the
kept finite values) and only the counts travel; NaN/Inf values are counted apart.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

BINS = 32
SAMPLES = 256  # samples read (the first ones of the main shape, in drawing order)
PER_SAMPLE = 256  # values per channel of each sample (32 x 32: every 4th pixel; 65,536 a channel in all)
MAX_CHANNELS = 4  # the image layouts have at most 4 channels (reduce.layout_of)


def channel_values(x: np.ndarray, layout: str) -> np.ndarray:
    """(samples, channels, values) of a stacked chunk in an image layout (``chw``, ``hwc``, ``hw``)."""
    k = x.shape[0]
    if layout == "chw":
        return x.reshape(k, x.shape[1], -1)
    if layout == "hwc":
        return x.reshape(k, -1, x.shape[-1]).transpose(0, 2, 1)
    return x.reshape(k, 1, -1)


def histogram(values: np.ndarray, bins: int = BINS) -> dict:
    """``bins`` equal bins over min..max of the finite ``values`` (one value: one bin of width 0
    is not drawable, so the range becomes [v, v + 1]); counts, and the values left out as NaN/Inf.
    The bin of each value by arithmetic and one ``bincount``, in the values' own float type:
    ``np.histogram`` on float64 copies took 20 ms for 256 RGB 32 x 32 images, this takes ~4."""
    values = np.asarray(values).ravel()
    if values.dtype.kind != "f":
        values = values.astype(np.float32)
    # a NaN makes the min NaN and an Inf shows in the min or max: only then are the finite values picked
    ends = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    kept = values if values.size and np.isfinite(ends).all() else values[np.isfinite(values)]
    nonfinite = int(values.size - kept.size)
    if not kept.size:
        return {"low": None, "high": None, "counts": [], "values": 0, "nonfinite": nonfinite}
    low, high = ends if kept is values else (float(kept.min()), float(kept.max()))
    span = high - low if high > low else 1.0
    scale = kept.dtype.type(bins / span) if span < float(np.finfo(kept.dtype).max) / 2 else None
    if scale is not None and np.isfinite(scale):
        # kept >= low, so every index is >= 0, and at most ``bins`` (the top edge; the rounding of the
        # span and the scale stays far below one bin): its count joins the last bin, no clip pass
        shifted = kept - kept.dtype.type(low)
        shifted *= scale  # in place: one temporary of the values' size fewer
        index = shifted.astype(np.intp)
        counts = np.bincount(index, minlength=bins + 1)
        counts[bins - 1] += counts[bins:].sum()
        counts = counts[:bins]
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            if scale is None:  # the span overflows the values' float type (+-3e38 in float32): halves, in float64
                half = kept.astype(np.float64) / 2 - low / 2
                index = (half * (bins / (high / 2 - low / 2))).astype(np.intp)
            else:  # bins / span overflows it (a span below ~1e-37): as before, clipped
                index = ((kept - kept.dtype.type(low)) * scale).astype(np.intp)
        counts = np.bincount(np.clip(index, 0, bins - 1, out=index), minlength=bins)  # the top edge: the last bin
    return {
        "low": low,
        "high": high,
        "counts": [int(c) for c in counts],
        "values": int(kept.size),
        "nonfinite": nonfinite,
    }


class Histograms:
    """The kept values of one split, per channel (see the module docstring)."""

    def __init__(self, layout: str, samples: int = SAMPLES, per_sample: int = PER_SAMPLE) -> None:
        self.layout = layout
        self.samples = max(0, int(samples))
        self.per_sample = max(1, int(per_sample))
        # (channels, samples x values) float32, allocated at the first chunk and written in place:
        # each channel's values are one block, read by to_json with no joining copy (a Histograms
        # sees one sample shape: the reducer keeps one gallery per shape)
        self.values: Optional[np.ndarray] = None
        self.seen = 0

    def offer(self, x: np.ndarray) -> None:
        """One stacked chunk (samples first, in ``self.layout``); read until SAMPLES are kept."""
        room = self.samples - self.seen
        if room <= 0 or not len(x):
            return
        c = channel_values(np.asarray(x[:room]), self.layout)
        stride = max(1, -(-c.shape[2] // self.per_sample))  # ceil: at most per_sample values
        picked = c[:, :MAX_CHANNELS, ::stride]  # (samples, channels, values)
        k, channels, each = picked.shape
        if self.values is None:
            self.values = np.empty((channels, self.samples * each), np.float32)
        at = self.seen * each
        np.copyto(
            self.values[:, at : at + k * each].reshape(channels, k, each), picked.transpose(1, 0, 2), casting="unsafe"
        )
        self.seen += k

    def to_json(self, bins: int = BINS) -> Optional[dict]:
        """{"bins", "samples", "channels": [histogram per channel]}, or None when nothing was kept."""
        if self.values is None or not self.seen:
            return None
        filled = self.values[:, : self.seen * (self.values.shape[1] // self.samples)]
        out = [histogram(filled[ch], bins) for ch in range(filled.shape[0])]
        return {"bins": int(bins), "samples": self.seen, "channels": out}
