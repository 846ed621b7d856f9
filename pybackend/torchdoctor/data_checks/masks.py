"""Segmentation masks (integer H x W labels): their pixel classes against the model's output channels.

A mask is no class index, so the label checks of ``labels.py`` do not read it. Here the values met in
a split's masks are compared with the output channels of the model's last conv (a segmentation head;
``model_info.py``): a value outside ``[0, channels)`` that the loss does not ignore is an error, with
the samples that hold it. 255 is the usual "void" label: it is read as ignored (a note) when the
given loss ignores it, or, with no loss given, when every other value is a class of the head and at
least two of them occur (so a 0/255 binary mask, whose foreground is 255, is still an error). With
no conv head the values are only listed in a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import findings as F
from . import thresholds as T

if TYPE_CHECKING:  # context imports reduce, which reads the masks' values here
    from .context import Context, Split

MASK_SIDE = 8  # the least height and width of a mask: (17, 3) integer rows are keypoints, not a mask
MAX_SPAN = 1024  # masks whose values span more are no class maps: their values are not tabulated
VOID = 255  # the usual "ignore" label of segmentation data sets (VOC's boundaries, Cityscapes' void)
ROWS = 64  # masks counted together (bounds the index array bincount reads)


def is_mask(arr: np.ndarray) -> bool:
    """Stacked labels ``arr`` (samples first) are integer masks: H x W, or 1 x H x W."""
    shape = arr.shape[1:]
    if arr.dtype.kind not in "iu" or not len(arr):
        return False
    if len(shape) == 3 and shape[0] == 1:
        shape = shape[1:]
    return len(shape) == 2 and min(shape) >= MASK_SIDE


def presence(arr: np.ndarray, extra: list) -> tuple:
    """(the values met in the masks, a samples x values table of which mask holds which): the stacked
    masks ``arr`` counted ``ROWS`` at a time with one ``bincount`` each, then the ``extra`` masks of
    other sizes (an evaluation split resized, not cropped) one at a time; the table is None past
    ``MAX_SPAN`` values."""
    flat = arr.reshape(len(arr), -1)
    lo = min([int(flat.min())] + [int(m.min()) for m in extra if m.size])
    hi = max([int(flat.max())] + [int(m.max()) for m in extra if m.size])
    span = hi - lo + 1
    if span > MAX_SPAN:
        return np.unique(np.concatenate([np.unique(flat)] + [np.unique(m) for m in extra])), None
    seen = np.zeros((len(flat) + len(extra), span), bool)
    for start in range(0, len(flat), ROWS):
        part = flat[start : start + ROWS].astype(np.int64) - lo
        part += (np.arange(len(part), dtype=np.int64) * span)[:, None]
        counts = np.bincount(part.ravel(), minlength=len(part) * span)
        seen[start : start + len(part)] = counts.reshape(len(part), span) > 0
    for k, m in enumerate(extra, len(flat)):
        seen[k] = np.bincount(m.ravel().astype(np.int64) - lo, minlength=span) > 0
    cols = np.flatnonzero(seen.any(0))
    return cols + lo, seen[:, cols]


def other_masks(indices: list, arrays: list, shape: tuple) -> list:
    """(index, mask) of the integer masks among ``arrays`` whose shape is not ``shape``."""
    out = []
    for i, a in zip(indices, arrays):
        if a is not None and a.shape != shape and is_mask(a[None]):
            out.append((i, a))
    return out


def _shown(values: list) -> str:
    return ", ".join(map(str, values[:12])) + (f" (+{len(values) - 12} more)" if len(values) > 12 else "")


def check(ctx: Context, split: Split) -> list:
    s = split.stats
    if s.mask_values is None:
        return []
    values = [int(v) for v in s.mask_values]
    model = ctx.model
    k = model.out_channels if model is not None else None
    if model is None or not k:
        ctx.notes.append(
            f"{split.name}: labels are H x W masks (values {_shown(values)}): pixel classes not checked (no model "
            'whose last layer is a conv: return it as "model" from torchdoctor_data() to check them)'
        )
        return []
    head = f"{model.name}.{model.conv_head_name}"
    classes = (0, 1) if k == 1 else range(k)  # one channel: a binary mask for a BCE loss
    ignored = T.IGNORE_INDEX if ctx.ignore_index is None else ctx.ignore_index
    inside = [v for v in values if v in classes]
    outside = [v for v in values if v not in classes and v != ignored]
    if outside == [VOID] and ctx.ignore_index is None and len(inside) >= 2:
        ctx.notes.append(
            f"{split.name}: mask value 255 read as ignored pixels (the usual void label): "
            + ("the loss must skip them (CrossEntropyLoss(ignore_index=255))" if k > 1 else "mask them out of the loss")
        )
        return []
    if not outside:
        return []
    return [_outside(ctx, split, values, outside, k, head)]


def _outside(ctx: Context, split: Split, values: list, outside: list, k: int, head: str) -> dict:
    s = split.stats
    idx: list = list(s.mask_indices)
    if s.mask_presence is not None:
        cols = [values.index(v) for v in outside]
        held: np.ndarray = np.asarray(s.mask_presence[:, cols].any(1))
        idx = [i for i, b in zip(s.mask_indices, held) if b]
        idx = sorted(idx) if all(isinstance(i, int) for i in idx) else idx
    span = "0 or 1 (one output channel)" if k == 1 else f"[0, {k})"
    return F.finding(
        F.LABEL_RANGE,
        F.ERRORS,
        split.name,
        f"{len(idx)} {split.name} masks hold pixel values outside {span} set by {head}'s {k} output "
        f"channel{'s' if k > 1 else ''} (values met: {_shown(values)}). Likely cause: {_cause(ctx, values, outside, k)}. "
        "CrossEntropyLoss raises on CPU and asserts on CUDA far from the cause; a BCE loss learns the wrong "
        "targets silently. Next step: map the mask's values to the head's classes, or size the head to them.",
        idx,
        source=split.source,
        classes=k,
        values=outside[:20],
    )


def _cause(ctx: Context, values: list, outside: list, k: int) -> str:
    if VOID in outside and set(values) <= {0, VOID}:
        return "a binary mask saved as 0/255: its foreground is 255 (mask // 255, or mask > 127, gives 0/1)"
    if outside == [VOID] and ctx.ignore_index is not None:
        return f"255 marks void pixels but the loss ignores {ctx.ignore_index}: CrossEntropyLoss(ignore_index=255)"
    classes = [v for v in values if v != VOID]
    if classes and min(classes) >= 1 and max(classes) == k:
        return f"classes numbered 1..{k}: CrossEntropyLoss wants 0..{k - 1} (subtract 1)"
    return "class ids that do not match the head (a colour palette index, a class added after the model was sized)"
