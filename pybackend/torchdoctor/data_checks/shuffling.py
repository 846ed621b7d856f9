"""A training DataLoader drawn in index order over data stored class by class: most batches of one class.

Only a training split (named so, or the only split) drawn through a DataLoader whose samples come
from a ``SequentialSampler`` (``shuffle=False``, or a ``BatchSampler`` over one) can be told so;
a dataset drawn directly says nothing about how training shuffles it, and a shuffled loader's
batches are random whatever the storage order. The evidence is the drawn batches: at least
``SORTED_BATCH_SHARE`` of the full ones hold one class, and the labels drawn change class at most
``SORTED_CHANGES`` times as often as they would in random order (so a rare class that leaves most
batches single-class by chance, 99:1 in random order, stays silent). The class shares of that
random order are the dataset's ``targets`` when it has them for every index (an ImageFolder's:
its first batches may all be class 0), else the drawn labels'. Regression targets and labels that
are not classes are never read here.
"""

from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .context import Context, Split
from .labels import class_labels, label_name
from .loader_source import OTHER_SPLITS, loader_line


def check(ctx: Context) -> list:
    if ctx.regression is not None:
        return []
    out = []
    for split in ctx.splits:
        if split.draws.kind != "loader" or not _training(ctx, split):
            continue
        size = _sequential_batch_size(split.draws.obj)
        if size is None or size < 2:
            continue
        y = _classes(split)
        if y is None or _one_output_regression(ctx, y):
            continue
        found = _grouped(split, y, size)
        if found is not None:
            out.append(_finding(ctx, split, size, found, y))
    return out


def _classes(split: Split) -> Optional[np.ndarray]:
    """The class labels drawn: indices or one-hot rows, and float 0/1 targets of one value a sample (a
    binary classifier's for ``BCEWithLogitsLoss``, stored negatives first)."""
    y = class_labels(split)
    s = split.stats
    if y is None and s.label_kind == "float" and s.labels is not None and len(s.labels):
        if np.isin(s.labels, (0.0, 1.0)).all():
            return s.labels.astype(np.int64)
    return y


def _training(ctx: Context, split: Split) -> bool:
    """The split's name says training (``train``, ``train_loader``, ``trainloader``), or it is the
    only split; never one whose name also says validation or test."""
    words = [w for w in re.split(r"[^a-z]+", split.name.lower()) if w]
    if any(w.startswith(OTHER_SPLITS) for w in words):
        return False
    return any("train" in w for w in words) or len(ctx.splits) == 1


def _sequential_batch_size(loader: Any) -> Optional[int]:
    """The batch size when the loader's samples come from a ``SequentialSampler`` through torch's
    ``BatchSampler`` (``shuffle=False``; a ``batch_sampler=BatchSampler(SequentialSampler(ds), ...)``
    too), else None: a random or distributed sampler, a custom batch sampler that may reorder its
    batches, an IterableDataset's or no batching (``batch_size=None``)."""
    batches = getattr(loader, "batch_sampler", None)
    if batches is None or not any(c.__name__ == "BatchSampler" for c in type(batches).__mro__):
        return None
    sampler = getattr(batches, "sampler", None)
    if type(sampler).__name__ != "SequentialSampler" and not _unshuffled_distributed(sampler):
        return None
    size = getattr(batches, "batch_size", None)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def _unshuffled_distributed(sampler: Any) -> bool:
    """A ``DistributedSampler(ds, shuffle=False)``: each rank's share in index order."""
    names = [c.__name__ for c in type(sampler).__mro__]
    return "DistributedSampler" in names and getattr(sampler, "shuffle", True) is False


def _one_output_regression(ctx: Context, y: np.ndarray) -> bool:
    """Integer labels of more than 2 values for a one-output model without a loss: read as
    regression targets by the label checks too (labels._regression)."""
    model = ctx.model
    if ctx.loss is not None or model is None or model.out_features != 1:
        return False
    return len(np.unique(y[y != T.IGNORE_INDEX])) > 2


def _grouped(split: Split, y: np.ndarray, size: int) -> Optional[dict]:
    """What the drawn batches show when their labels are grouped by class, else None."""
    positions = np.asarray(split.stats.label_indices, dtype=np.int64)
    if len(positions) != len(y):
        return None
    keep = y != T.IGNORE_INDEX
    positions, y = positions[keep], y[keep]
    full = positions < (len(split.draws.indices) // size) * size  # a last, short batch is left out
    positions, y = positions[full], y[full]
    batch = positions // size
    numbers, starts = np.unique(batch, return_index=True)
    if len(numbers) < T.SORTED_MIN_BATCHES:
        return None
    ends = np.append(starts[1:], len(y))
    single = sum(1 for a, b in zip(starts, ends) if b - a >= 2 and np.all(y[a:b] == y[a]))
    if single < T.SORTED_BATCH_SHARE * len(numbers):
        return None
    shares, declared = _class_shares(split, y, positions)
    expected = (len(y) - 1) * (1.0 - float(np.sum(shares**2)))
    changes = int(np.count_nonzero(y[1:] != y[:-1]))
    if expected < T.SORTED_MIN_EXPECTED or changes > T.SORTED_CHANGES * expected:
        return None
    return {
        "batches": int(len(numbers)),
        "singleClass": int(single),
        "changes": changes,
        "expectedChanges": round(expected, 1),
        "classesDrawn": int(len(np.unique(y))),
        "classes": declared,
    }


def in_runs(y: np.ndarray) -> bool:
    """The labels, in draw order, change class at most ``SORTED_CHANGES`` times as often as a random order
    of the same labels would (a single class: True): stored class by class, not in random order."""
    _, counts = np.unique(y, return_counts=True)
    expected = (len(y) - 1) * (1.0 - float(np.sum((counts / max(counts.sum(), 1)) ** 2)))
    return int(np.count_nonzero(y[1:] != y[:-1])) <= T.SORTED_CHANGES * expected


def _class_shares(split: Split, y: np.ndarray, positions: np.ndarray) -> tuple:
    """The class shares of a random order, and the number of classes they are over: the dataset's
    ``targets`` (or ``labels``) when it holds one integer label per index and they are the labels drawn
    at those indices, else the drawn labels (a ``target_transform`` mapping 20 classes to one-vs-rest
    leaves ``targets`` as they were: their shares are not the drawn labels')."""
    ds = split.draws.dataset
    for attr in ("targets", "labels", "samples", "imgs"):
        stored = _stored_labels(ds, attr)
        if stored is not None and not np.array_equal(stored[positions[positions < len(stored)]], y):
            stored = None
        if stored is not None:
            _, counts = np.unique(stored[stored != T.IGNORE_INDEX], return_counts=True)
            if len(counts) >= 2:
                return counts / counts.sum(), int(len(counts))
    _, counts = np.unique(y, return_counts=True)
    return counts / counts.sum(), int(len(counts))


def _stored_labels(ds: Any, attr: str) -> Optional[np.ndarray]:
    value = getattr(ds, attr, None) if ds is not None else None
    if value is None or callable(value):
        return None
    try:
        if attr in ("samples", "imgs"):  # an ImageFolder's (path, class index) pairs
            value = [pair[1] if isinstance(pair, tuple) and len(pair) == 2 else None for pair in value]
        arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        length = len(ds)
    except Exception:  # noqa: BLE001 - an attribute of the user's dataset that is not labels
        return None
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or len(arr) != length or length == 0:
        return None
    return arr.astype(np.int64)


def _finding(ctx: Context, split: Split, size: int, seen: dict, y: np.ndarray) -> dict:
    y = y[y != T.IGNORE_INDEX]  # the class of them all, not an ignored first label's -100
    one = label_name(split, int(y[0])) if len(y) and seen["classesDrawn"] == 1 else None
    distributed = _unshuffled_distributed(_inner(split.draws.obj))
    how = "a DistributedSampler with shuffle=False" if distributed else "a SequentialSampler"
    what = (
        f"all {seen['batches']} drawn {split.name} batches (batch size {size}) hold class `{one}` only, while the "
        f"dataset's labels have {seen['classes']} classes"
        if one is not None
        else f"{seen['singleClass']} of {seen['batches']} drawn {split.name} batches (batch size {size}) hold one "
        f"class; the {seen['classesDrawn']} classes drawn come in runs: the labels change class {seen['changes']} "
        f"time{'s' if seen['changes'] != 1 else ''} where a random order would change about "
        f"{seen['expectedChanges']:.0f} times"
    )
    return F.finding(
        F.SORTED_UNSHUFFLED,
        F.WARNING,
        split.name,
        f"{what}. The loader draws in index order ({how}) over data stored class by class: "
        "each SGD step sees one class, the model is pulled towards it, then towards the next, and the loss "
        "swings from class block to class block. Likely cause: shuffle=False (or no shuffle argument) on the "
        "training DataLoader over an ImageFolder-style dataset or a concatenation of per-class datasets. "
        "Next step: DataLoader(..., shuffle=True) for training (with a DistributedSampler: shuffle=True and "
        "sampler.set_epoch(epoch) each epoch); keep validation and test loaders unshuffled.",
        source=loader_line(ctx.origin, split.name) or ctx.origin or split.source,
        batchSize=size,
        **seen,
    )


def _inner(loader: Any) -> Any:
    return getattr(getattr(loader, "batch_sampler", None), "sampler", None)
