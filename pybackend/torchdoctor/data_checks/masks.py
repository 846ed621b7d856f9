"""Segmentation masks (integer H x W labels): their pixel classes against the model's output channels.

A mask is no class index, so the label checks of ``labels.py`` do not read it. Here the values met in
a split's masks are compared with the output channels of the model's head: the last conv that runs in
one forward on a zero sample (``model_info.output_conv``), else the last conv registered. A value
outside ``[0, channels)`` that the loss does not ignore is an error, with the samples that hold it,
only when the head is sure (the model ran and its output is a map of that conv's channels) and the
values surely class ids (``_unsure``); else a note says why it was not reported. 255 is the usual
"void" label: it is read as ignored (a note) when the given loss ignores it, or, with no loss given,
when every other value is a class of the head and at least two of them occur (so a 0/255 binary
mask for 2 classes, whose foreground is 255, is still an error). With no conv head the values are
only listed in a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .model_info import not_run, output_conv

INDEX_LOSSES = ("CrossEntropyLoss", "NLLLoss")  # label_form's: it imports context, which imports this module
BINARY_LOSSES = ("BCEWithLogitsLoss", "BCELoss")

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
    found = _head(ctx, split)
    if found is None:
        ctx.notes.append(
            f"{split.name}: labels are H x W masks (values {_shown(values)}): pixel classes not checked (no model "
            'whose last layer is a conv: return it as "model" from torchdoctor_data() to check them)'
        )
        return []
    name, k, unsure = found
    head = f"{ctx.model.name}.{name}" if ctx.model is not None else name
    classes = (0, 1) if k == 1 else range(k)  # one channel: a binary mask for a BCE loss
    if len(values) == 1 and values[0] in classes:
        return _one_class(ctx, split, values[0], k, head)
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
    unsure = unsure or _unsure(ctx, values, inside, outside, k)
    if unsure:
        ctx.notes.append(
            f"{split.name}: H x W labels hold values outside {_span(k)} of {head}'s {k} output channel"
            f"{'s' if k > 1 else ''} (values met: {_shown(values)}): not reported as labels out of range, {unsure}"
        )
        return []
    return [_outside(ctx, split, values, outside, k, head)]


def _one_class(ctx: Context, split: Split, value: int, k: int, head: str) -> list:
    """Every pixel of every training mask is one class while the head predicts several (or one channel
    trained by a BCE loss): nothing to segment is learned. The usual cause is a mask put through
    ``ToTensor`` (which divides by 255) then ``.long()``, which makes class ids 0..20 all 0. An
    evaluation split's constant masks may be placeholders of a split without ground truth, and a
    few masks may all be background by chance: neither is reported."""
    s = split.stats
    if split is not ctx.train or len(s.mask_indices) < T.ONE_CLASS_MIN_MASKS or split.draws.cut:
        return []
    if k == 1 and ctx.loss not in BINARY_LOSSES:
        return []
    return [
        F.finding(
            F.IMBALANCE,
            F.WARNING,
            split.name,
            f"every pixel of the {len(s.mask_indices)} sampled {split.name} masks is {value}, while {head} predicts "
            f"{k} output channel{'s' if k > 1 else ''}: always predicting {value} scores 100% pixel accuracy and the "
            "model learns nothing to segment. Likely cause: the masks went through ToTensor (which divides by 255) "
            "and then .long(), which makes small class ids 0, or the mask files read are not the labelled ones. "
            "Next step: turn each mask into a tensor with torch.as_tensor(np.array(mask), dtype=torch.long), "
            "not ToTensor, and look at a few masks' values.",
            source=split.source,
            histogram={str(value): len(s.mask_indices)},
            majorityShare=1.0,
        )
    ]


def _head(ctx: Context, split: Split) -> Optional[tuple]:
    """(conv name, output channels, why it may not be the head or ``""``): the conv that ran last in one
    forward on a zero sample of the features' shape, sure when the model's output is a map of its
    channels; else the last conv registered (a head registered before its body is missed so: never
    sure). None without a conv head."""
    model = ctx.model
    if model is None:
        return None
    ran = output_conv(model, split.stats.shape)
    if ran is not None:
        name, k, channels = ran
        if channels is None and not model.out_channels:
            return None  # a classifier's output (a Linear after the convs), no map
        why = "" if channels == k else "as the model's output is no map of that conv's channels"
        return name, k, why
    if not model.out_channels or not model.conv_head_name:
        return None
    return (
        model.conv_head_name,
        model.out_channels,
        f"as that conv was found by the modules' order, not by running the model on a sample "
        f"({not_run(model, split.stats.shape)}): "
        "it may not be the head that gives the output",
    )


def _unsure(ctx: Context, values: list, inside: list, outside: list, k: int) -> str:
    """Why the values need not be class ids of the head (then a note, no error), or ``""`` when they
    surely are: a classification loss over the head's channels was given (CrossEntropyLoss or NLLLoss
    and 2 channels or more; a BCE loss and 1 channel, 0..255 values); or, with no loss known, a mask
    saved as 0/255 for 2 classes, or a few values past the head beside the classes (one value past
    per 4 values inside, one at least). One channel without a BCE loss is a depth or intensity map as
    often; many values past the head (instance ids, millimetres) are no class ids."""
    if ctx.loss in INDEX_LOSSES and k >= 2:
        return ""
    if ctx.loss in BINARY_LOSSES and k == 1 and 0 <= min(values) <= max(values) <= VOID:
        return ""
    if ctx.loss is not None:
        return f"as {ctx.loss} with {k} output channel{'s' if k > 1 else ''} takes no class id per pixel"
    if k == 1:
        return "as one output channel with no loss given may predict a depth or intensity map, not classes"
    if set(values) == {0, VOID} and k == 2:
        return ""
    past = [v for v in outside if v != VOID]
    if len(inside) >= 2 and min(past, default=0) >= 0 and len(past) <= max(1, len(inside) // 4):
        return ""
    return (
        f"as {len(past)} values past the head beside {len(inside)} within it, with no loss given, look like ids "
        "or measurements (instance ids, depth), not classes; return the loss from torchdoctor_data() to check them"
    )


def _span(k: int) -> str:
    return "0 or 1 (one output channel)" if k == 1 else f"[0, {k})"


def _outside(ctx: Context, split: Split, values: list, outside: list, k: int, head: str) -> dict:
    s = split.stats
    idx: list = list(s.mask_indices)
    if s.mask_presence is not None:
        cols = [values.index(v) for v in outside]
        held: np.ndarray = np.asarray(s.mask_presence[:, cols].any(1))
        idx = [i for i, b in zip(s.mask_indices, held) if b]
        idx = sorted(idx) if all(isinstance(i, int) for i in idx) else idx
    span = _span(k)
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
