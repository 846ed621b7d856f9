"""How drawn samples go into a split's ``Draws`` (sampling.py), once per sample beside the user's
``__getitem__``: the features to the reducer (``reduce.py``), the labels kept, the first sample's
dtypes noted. Kept flat and apart from the drawing loops: it is the check's own per-sample cost."""

from __future__ import annotations

import sys
from typing import Any, Optional

from .arrays import box_labels, dtype_name, split_xy, to_array
from .reduce import Reducer

_PAIR = split_xy((None, None))[2]


def add(d: Any, index: Any, sample: Any, tensor: Any = None) -> None:
    """One drawn sample into ``d``: features to the reducer, the label kept. Runs once per sample
    beside the user's ``__getitem__``, so it is kept flat (``tensor``: torch.Tensor, looked up
    once per split by the caller; a tensor goes to the reducer as it is)."""
    if type(sample) is tuple and len(sample) >= 2 and type(sample[0]) is tensor and tensor is not None:
        x, y, how = sample[0], sample[1], _PAIR  # what split_xy says of an (image, label) tuple
    else:
        x, y, how = split_xy(sample, describe=not d.how)  # only the first sample's is kept (_begin)
    _begin(d, how, x, y)
    if type(x) is not tensor or tensor is None:
        x = to_array(x)
    if d.probes and len(d.indices) in d.probes:
        d.probes[len(d.indices)] = x
    d.indices.append(index)
    d.numeric += x is not None  # a tensor counts: only numeric tensors are passed through
    d.reducer.add(index, x)
    boxes = box_labels(y) if isinstance(y, (dict, list, tuple)) else None
    d.ys.append(y if boxes is None else boxes)  # converted all at once in reduce._labels


def add_many(d: Any, indices: list, samples: list, tensor: Any) -> None:
    """Samples drawn in a row into ``d``, as ``add`` one at a time would: when each is an (image
    tensor, label) tuple whose label is no detection target, by whole lists (the per-sample Python of
    ``add`` cost as much as 3% of a CIFAR-like ``__getitem__``); else one at a time with ``add``."""
    pairs = _pairs(samples, tensor)
    if pairs is None:
        for i, sample in zip(indices, samples):
            add(d, i, sample, tensor)
        return
    xs, ys = pairs
    _begin(d, _PAIR, xs[0], ys[0])
    start = len(d.indices)
    for p in d.probes:
        if start <= p < start + len(xs):
            d.probes[p] = xs[p - start]
    d.indices += indices
    d.numeric += len(xs)
    d.reducer.add_many(indices, xs)
    d.ys += ys


def _pairs(samples: list, tensor: Any) -> Optional[tuple]:
    """(features, labels) when every sample is a tuple of 2 or more whose first item is a ``tensor``
    (exactly, no subclass) and whose label is no dict, list or tuple (a detection target); else None.
    Asked of the types met (``map``, ``set``) rather than per sample in Python: a third of the time."""
    if tensor is None or not samples or set(map(type, samples)) != {tuple} or min(map(len, samples)) < 2:
        return None
    xs = [s[0] for s in samples]
    ys = [s[1] for s in samples]
    if set(map(type, xs)) != {tensor} or any(issubclass(t, (dict, list, tuple)) for t in set(map(type, ys))):
        return None
    return xs, ys


def _begin(d: Any, how: Any, x: Any, y: Any) -> None:
    """At the split's first sample: how samples split into features and label, their dtypes, and
    the reducer."""
    if not d.how:
        d.how, d.x_dtype, d.y_dtype = how, dtype_name(x), dtype_name(y) if y is not None else ""
    if d.reducer is None:
        d.reducer = Reducer(d.name, d.gallery)


def tensor_type() -> Any:
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else None
