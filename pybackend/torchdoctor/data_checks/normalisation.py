"""Normalisation: 0..255 values as floats, unstandardised feature vectors; per-channel mean/std."""

from __future__ import annotations

import numpy as np

from . import findings as F
from . import thresholds as T
from .context import Context, Split
from .spell import nums

IMAGE_LAYOUTS = ("chw", "hwc", "hw")


def check(ctx: Context) -> list:
    norm = ctx.model.input_norm if ctx.model is not None else None
    if norm is not None:  # the model standardises its input itself: the input's scale does not matter
        ctx.notes.append(f"normalisation: the model's first layer {norm} standardises its input: scale not judged")
        return []
    out = []
    for split in ctx.splits:
        s = split.stats
        if not s.float_kind or not s.sampled:
            continue
        if s.layout in IMAGE_LAYOUTS:
            out += _uint8_range(split)
            if split.name == getattr(ctx.train, "name", None):
                out += _mismatched_statistics(split)
        elif s.layout == "vector":
            out += _unscaled(split)
        elif s.layout == "other":
            out += _pcm_scale(split)
    return out


def _pcm_scale(split: Split) -> list:
    """Waveforms (one or two channels of ``PCM_MIN_LENGTH`` values or more) of whole-number floats past
    the 0..255 range and within int16's: 16-bit PCM samples converted with ``.float()`` but never
    divided by 32768 (``torchaudio.load(normalize=False)``, ``soundfile.read(dtype="int16")``, a WAV
    read with ``scipy.io.wavfile``). Audio in [-1, 1] is never whole numbers; other signals (point
    clouds, sensor windows of several channels) are not judged."""
    s = split.stats
    shape = tuple(s.shape or ())
    if not shape or shape[-1] < T.PCM_MIN_LENGTH or int(np.prod(shape[:-1])) > 2 or not s.integral:
        return []
    peak = max(abs(s.vmin), abs(s.vmax))
    if not (T.UINT8_HIGH < peak <= T.INT16_PEAK) or s.vmin >= 0:
        return []
    return [
        F.finding(
            F.UNSCALED,
            F.WARNING,
            split.name,
            f"{split.name} waveforms are whole-number floats from {s.vmin:g} to {s.vmax:g}: 16-bit PCM samples "
            "never scaled to [-1, 1]. Likely cause: the audio was read as int16 (torchaudio.load(normalize=False), "
            'soundfile.read(dtype="int16"), scipy.io.wavfile.read) and converted with .float(). Next step: divide '
            "by 32768, or load it as float (torchaudio.load's default, soundfile's dtype='float32').",
            source=split.source,
            min=s.vmin,
            max=s.vmax,
        )
    ]


def _uint8_range(split: Split) -> list:
    s = split.stats
    if not (T.UINT8_LOW < s.vmax <= T.UINT8_HIGH and s.vmin >= -0.5) or not (s.integral or _rgb_0_255(s)):
        return []
    return [
        F.finding(
            F.UINT8_RANGE,
            F.WARNING,
            split.name,
            f"{split.name} images are floats from {s.vmin:g} to {s.vmax:g} (per-channel mean {nums(s.ch_mean)}): "
            "pixel values 0..255 as floats, never scaled. Likely cause: the image was converted with "
            "torch.tensor / .float() instead of ToTensor(), or the /255 is missing. Next step: divide by 255 "
            "(transforms.ToTensor() or ToDtype(torch.float32, scale=True)), then Normalize with the data's mean/std.",
            source=split.source,
            min=s.vmin,
            max=s.vmax,
            mean=s.ch_mean,
            std=s.ch_std,
        )
    ]


def _rgb_0_255(s) -> bool:
    """RGB images whose every channel averages above ``UINT8_LOW`` within 0..255: 0..255 pixels that a
    float resize or blur (after the conversion, before any scaling) left fractional. Only three
    channels: one-channel maps in metres or degrees take such values by design."""
    mean = s.ch_mean
    return s.channels == 3 and mean is not None and bool(np.all(mean > T.UINT8_LOW))


IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _mismatched_statistics(split: Split) -> list:
    """Normalised training images (negative values) whose channel means are far from 0: the
    mean/std given to Normalize are not this data's (ImageNet's on grayscale scans, say)."""
    s = split.stats
    mean, std = s.ch_mean, s.ch_std
    if mean is None or std is None or s.vmin >= 0 or not np.any(np.abs(mean) > T.NORMALISED_MEAN):
        return []
    raw = ""
    if len(mean) == 3:  # undo ImageNet's Normalize: if that gives [0, 1]-like data, it was ImageNet's
        before = np.array(mean) * np.array(IMAGENET_STD) + np.array(IMAGENET_MEAN)
        if np.all((before > -0.05) & (before < 1.05)):
            raw = f" Undoing ImageNet's Normalize gives channel means {nums(before)}: ImageNet's statistics, not this data's."
    return [
        F.finding(
            F.MISMATCHED_STATS,
            F.WARNING,
            split.name,
            f"{split.name} images go below 0, as normalised images do, but their channel means are {nums(mean)} with "
            f"std {nums(std)}, not about 0 and 1: if they went through Normalize, its mean/std are not this data's; "
            f"if not, they are not standardised.{raw} "
            "Next step: compute the training split's own per-channel mean and std and normalise with those (or "
            "keep ImageNet's only for natural photos with a pretrained backbone).",
            source=split.source,
            mean=[float(v) for v in mean],
            std=[float(v) for v in std],
        )
    ]


def _unscaled(split: Split) -> list:
    s = split.stats
    x = s.vectors
    if x is None or len(x) < 2:
        return []
    x = x.astype(np.float64)
    x = np.where(np.isfinite(x), x, np.nan)
    mean, std = np.nanmean(x, 0), np.nanstd(x, 0)
    scale = np.maximum(np.abs(mean), std)
    bad = np.flatnonzero(scale > T.UNSCALED)
    if not bad.size:
        return []
    worst = bad[np.argsort(-scale[bad])][:5]
    listed = ", ".join(f"feature {j}: mean {mean[j]:.3g}, std {std[j]:.3g}" for j in worst)
    return [
        F.finding(
            F.UNSCALED,
            F.WARNING,
            split.name,
            f"{len(bad)} of {x.shape[1]} {split.name} features are not standardised ({listed}). Likely cause: "
            "raw measurements (prices, ages, counts) fed as they are; large inputs saturate activations and "
            "make one learning rate wrong for every feature. Next step: standardise each feature with the "
            "training split's mean and std (fitted on train only, after the split).",
            source=split.source,
            features=[int(j) for j in bad[: T.MAX_INDICES]],
            mean=[float(mean[j]) for j in worst],
            std=[float(std[j]) for j in worst],
        )
    ]
