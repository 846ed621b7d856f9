"""Height and width swapped between splits: every sample of one split is the transpose (H <-> W) of
every sample of the training split.

One batch cannot say which way is up (square images never can, and a model's first conv does not
know the image size), and within one split portrait and landscape photos transpose each other by
nature: only two splits that each hold one non-square shape, the one the other's transposed, prove
it. The likely cause is a size given as PIL's (width, height) where (height, width) was meant
(``transforms.Resize(img.size)``), or a ``transpose`` in one split's pipeline.
"""

from __future__ import annotations

from typing import Optional

from . import findings as F
from .context import Context, Split

SPATIAL = {"chw": (1, 2), "hwc": (0, 1), "hw": (0, 1)}  # where H and W are in each image layout


def _hw(split: Split) -> Optional[tuple]:
    """(H, W) of a split whose drawn samples all have one image shape, else None."""
    s = split.stats
    where = SPATIAL.get(s.layout)
    if where is None or not s.sampled or s.other_shapes:
        return None
    return s.shape[where[0]], s.shape[where[1]]


def check(ctx: Context) -> list:
    train = ctx.train
    if train is None:
        return []
    ref = _hw(train)
    if ref is None or ref[0] == ref[1]:
        return []
    out = []
    for split in ctx.others():
        hw = _hw(split)
        if hw is None or split.stats.layout != train.stats.layout or hw != (ref[1], ref[0]):
            continue
        if len(split.stats.shape) == 3 and _channels(split) != _channels(train):
            continue
        out.append(_finding(train, split, ref))
    return out


def _channels(split: Split) -> int:
    s = split.stats
    return int(s.shape[0] if s.layout == "chw" else s.shape[-1])


def _finding(train: Split, split: Split, ref: tuple) -> dict:
    h, w = ref
    return F.finding(
        F.TRANSPOSED,
        F.WARNING,
        split.name,
        f"{split.name} gives images of H x W = {w} x {h} (samples of shape {list(split.stats.shape)}) where "
        f"{train.name} gives {h} x {w} ({list(train.stats.shape)}), in every sampled image of both: height and "
        f"width are swapped between the splits. A model trained on {train.name} sees {split.name}'s images "
        "transposed: a fully convolutional one runs on them without an error and scores worse, one with a "
        "Linear after Flatten raises a shape mismatch. Likely cause: a size given as PIL's (width, height) where "
        "(height, width) is meant (transforms.Resize(img.size), reshape(w, h)), or a transpose in one split's "
        f"pipeline. Next step: compare the two splits' transforms and resize both to (H, W) = ({h}, {w}).",
        split.stats.indices,
        source=split.source,
        shape=list(split.stats.shape),
        trainShape=list(train.stats.shape),
    )
