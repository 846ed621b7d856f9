"""Labels: the histogram, imbalance with the majority-class baseline, labels outside [0, classes),
one output for many classes, labels of another split never seen in training."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import findings as F
from . import masks
from . import thresholds as T
from .context import Context, Split

CLASS_LOSSES = masks.INDEX_LOSSES + masks.BINARY_LOSSES  # losses whose targets are surely classes


def class_labels(split: Split) -> Optional[np.ndarray]:
    """Integer class labels (index or one-hot), or None when the labels are not classes."""
    s = split.stats
    if s.labels is None or s.label_kind not in ("index", "onehot"):
        return None
    y = s.labels
    if len(np.unique(y)) > T.MAX_CLASSES:
        return None
    return y.astype(np.int64)


def histogram(split: Split) -> Optional[dict]:
    """Class label -> samples; for detection targets ("boxes") class id -> boxes, the ids as they
    are (a detection dataset's ids, COCO's category ids among them, need not index its classes list)."""
    s = split.stats
    if s.label_kind == "boxes" and s.box_labels is not None:
        values, counts = np.unique(s.box_labels, return_counts=True)
        if len(values) > T.MAX_CLASSES:
            return None
        return {str(int(v)): int(c) for v, c in zip(values, counts)}
    y = class_labels(split)
    if y is None:
        return None
    values, counts = np.unique(y, return_counts=True)
    return {label_name(split, int(v)): int(c) for v, c in zip(values, counts)}


def label_name(split: Split, label: int) -> str:
    classes = split.classes
    if classes and 0 <= label < len(classes):
        return f"{label} ({classes[label]})"
    return str(label)


def check(ctx: Context) -> list:
    if _regression(ctx):
        return []
    out = []
    for split in ctx.splits:
        out += masks.check(ctx, split)
        y = class_labels(split)
        if y is None:
            continue
        out += _range(ctx, split, y)
        if split.name == getattr(ctx.train, "name", None):
            out += _imbalance(split, y) or _one_class(ctx, split, y)
    out += _unseen(ctx)
    return out


def _regression(ctx: Context) -> bool:
    """The labels are regression targets, not classes: a regression loss was given (integer ages with
    L1Loss), or no loss was and the model has one output while the integer labels take more than 2
    values. That is regression as often as a class count gone wrong, so a note says so, not an error."""
    if ctx.regression is not None:
        ctx.notes.append(f"labels: read as regression targets ({ctx.regression}): no class checks")
        return True
    model = ctx.model
    if ctx.loss is not None or model is None or model.out_features != 1:
        return False
    for split in ctx.splits:
        y = class_labels(split)
        many = np.unique(y[y != T.IGNORE_INDEX]) if y is not None else np.zeros(0)
        if len(many) > 2:
            ctx.notes.append(
                f"{split.name}: labels take {len(many)} integer values and {model.name}.{model.head_name} has one "
                "output: read as regression targets, no class checks. If they are classes, give the last layer one "
                'output per class and use CrossEntropyLoss (return it as "loss" from torchdoctor_data() to check them).'
            )
            return True
    return False


def _imbalance(split: Split, y: np.ndarray) -> list:
    values, counts = np.unique(y[y != T.IGNORE_INDEX], return_counts=True)
    if len(values) < 2:
        return []
    total = counts.sum()
    if split.draws.cut and total < T.IMBALANCE_MIN_CUT:  # a few samples, when the time budget ran out
        return []
    top = int(np.argmax(counts))
    share = counts[top] / total
    ratio = counts.max() / counts.min()
    if share < T.IMBALANCE_MAJORITY and not (len(values) >= 3 and ratio >= T.IMBALANCE_RATIO):
        return []
    name = label_name(split, int(values[top]))
    rare = label_name(split, int(values[int(np.argmin(counts))]))
    return [
        F.finding(
            F.IMBALANCE,
            F.WARNING,
            split.name,
            f"{split.name} labels are imbalanced: always predicting `{name}` scores {share:.0%} accuracy "
            f"({counts[top]} of {total} sampled labels; the rarest, `{rare}`, has {counts.min()}). Accuracy is "
            "misleading here. Next step: report balanced accuracy, per-class recall or F1, and weight the loss "
            "(CrossEntropyLoss(weight=...)) or resample (WeightedRandomSampler).",
            source=split.source,
            histogram={label_name(split, int(v)): int(c) for v, c in zip(values, counts)},
            majorityShare=float(share),
        )
    ]


def _one_class(ctx: Context, split: Split, y: np.ndarray) -> list:
    """Every training label is one class while a classification loss is given: the model can only
    learn that class (labels never filled in, a label column read from the wrong field). Without a
    loss one value is as often a placeholder (an autoencoder's ``img, 0``), so nothing is said."""
    values = np.unique(y[y != T.IGNORE_INDEX])
    if len(values) != 1 or ctx.loss not in CLASS_LOSSES or len(y) < T.IMBALANCE_MIN_CUT:
        return []
    if len(split.classes or ()) == 1:  # an ImageFolder of one folder (DCGAN's real images under its
        return []  # BCELoss): the dataset says it has one class, its label unused (review, 2026-12-06)
    name = label_name(split, int(values[0]))
    return [
        F.finding(
            F.IMBALANCE,
            F.WARNING,
            split.name,
            f"every one of the {len(y)} sampled {split.name} labels is `{name}` and the loss is {ctx.loss}: the "
            f"model can only learn to predict `{name}`, which scores 100% on this split. Likely cause: labels "
            "never filled in (a default 0), read from the wrong field or column, or a split sorted by class and "
            "cut. Next step: print a few samples' labels and the label counts of the whole split.",
            source=split.source,
            histogram={name: int(len(y))},
            majorityShare=1.0,
        )
    ]


def _range(ctx: Context, split: Split, y: np.ndarray) -> list:
    model = ctx.model
    k = model.out_features if model is not None and model.out_features else None
    source = "its classes list" if k is None else f"{model.name}.{model.head_name}" if model else ""
    if k is None and split.classes:
        k = len(split.classes)
    values = np.unique(y)
    if k == 1:
        many = values[values != T.IGNORE_INDEX]
        if len(many) > 2:
            return [
                F.finding(
                    F.ONE_OUTPUT,
                    F.ERRORS,
                    split.name,
                    f"{split.name} labels take {len(many)} values ({', '.join(map(str, many[:10]))}) but "
                    f"{source} has one output. Likely cause: a binary loss (BCE) or MSE on class ids for a "
                    f"multi-class task. Next step: give the last layer {len(many)} outputs and use CrossEntropyLoss.",
                    source=split.source,
                )
            ]
        return []
    if k is None:
        return []
    bad_mask = ((y < 0) & (y != T.IGNORE_INDEX)) | (y >= k)
    if not bad_mask.any():
        return []
    idx = [i for i, b in zip(split.stats.label_indices, bad_mask) if b]
    shifted = values.min() >= 1 and values.max() == k
    why = (
        f"labels run 1..{k}: they are numbered from 1, CrossEntropyLoss wants 0..{k - 1} (subtract 1)"
        if shifted
        else "a label mapping that does not match the model's head, or a class added after the model was sized"
    )
    return [
        F.finding(
            F.LABEL_RANGE,
            F.ERRORS,
            split.name,
            f"{len(idx)} {split.name} labels fall outside [0, {k}) set by {source} "
            f"(values {', '.join(map(str, values[(values < 0) | (values >= k)][:10]))}). Likely cause: {why}. "
            "On CPU CrossEntropyLoss raises; on CUDA it is a device-side assert far from the cause. "
            "Next step: fix the label mapping or the head's output size.",
            idx,
            source=split.source,
            classes=k,
        )
    ]


def _every_sample_drawn(split: Split) -> bool:
    """As many draws as samples, without replacement: a loader whose sampler draws with replacement
    (``RandomSampler(replacement=True)``, ``WeightedRandomSampler``) may miss classes in as many draws."""
    d = split.draws
    if d.length is None or len(d.indices) < d.length:
        return False
    if d.kind != "loader":
        return True
    inner = getattr(getattr(d.obj, "batch_sampler", None), "sampler", None)
    samplers = [getattr(d.obj, "sampler", None), inner]
    return not any(getattr(sampler, "replacement", False) for sampler in samplers)


def _unseen(ctx: Context) -> list:
    train = ctx.train
    if train is None:
        return []
    ty = class_labels(train)
    if ty is None or not _every_sample_drawn(train):
        return []  # only when every training label was seen
    known = set(np.unique(ty).tolist())
    out = []
    for split in ctx.others():
        y = class_labels(split)
        if y is None:
            continue
        new = sorted(set(np.unique(y).tolist()) - known - {T.IGNORE_INDEX})
        if not new:
            continue
        idx = [i for i, v in zip(split.stats.label_indices, y) if int(v) in new]
        out.append(
            F.finding(
                F.UNSEEN_LABELS,
                F.WARNING,
                split.name,
                f"{split.name} has labels never seen in {train.name}: {', '.join(label_name(split, v) for v in new[:10])} "
                f"({len(idx)} samples). The model cannot learn them. Likely cause: a split by time or source "
                "that left classes out, or a label mapping built per split. Next step: stratify the split "
                "(train_test_split(..., stratify=y)) and build one label mapping for all splits.",
                idx,
                source=split.source,
            )
        )
    return out
