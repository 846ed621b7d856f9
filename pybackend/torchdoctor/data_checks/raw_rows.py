"""The stored rows behind a dataset, when it keeps them in one array (duplicates hash them all)."""

from __future__ import annotations

import sys
from typing import Any, Optional

from .arrays import to_array

RAW_ATTRIBUTES = ("data", "images", "x", "X", "inputs", "features")
# what a transform wrapper calls the dataset it reads from (a Dataset of labels or masks kept beside
# the images under another name is no source of the features)
WRAPPED_NAMES = ("subset", "dataset", "base", "base_dataset", "ds", "data", "source", "split", "inner")


def base_of(obj: Any) -> tuple[Any, Optional[list]]:
    """(the dataset behind Subsets and transform wrappers, the base index of each index) - indices None: identity."""
    mapping: Optional[list] = None
    depth = 0
    while depth < 10:
        if type(obj).__name__ == "Subset" and hasattr(obj, "indices"):
            idx = [int(i) for i in obj.indices]
            mapping = idx if mapping is None else [idx[i] for i in mapping]
            obj, depth = obj.dataset, depth + 1
            continue
        inner = _wrapped(obj)
        if inner is None:
            break
        obj, depth = inner, depth + 1
    return obj, mapping


def _wrapped(obj: Any) -> Any:
    """The one Dataset a wrapper holds, as long as the wrapper, when the wrapper keeps no rows of its
    own: the usual way to give each part of a ``random_split`` its own transform
    (``self.subset = subset``, ``__getitem__`` reads ``self.subset[i]`` and transforms it). Its sample
    ``i`` is the inner one's, so the inner stored rows are its rows. Two datasets held, or one of
    another length (pairs, windows), or one under another name than ``WRAPPED_NAMES``, are no such
    wrapper: None."""
    if raw_store(obj) is not None or not hasattr(obj, "__dict__"):
        return None
    try:
        n = len(obj)
    except TypeError:
        return None
    data = sys.modules.get("torch.utils.data")  # loaded by the datasets themselves: not imported here
    if data is None:
        return None
    held = [v for v in vars(obj).values() if isinstance(v, data.Dataset)]
    named = [v for k, v in vars(obj).items() if k.lstrip("_") in WRAPPED_NAMES and isinstance(v, data.Dataset)]
    if len(held) != 1 or len(named) != 1:
        return None
    try:
        return held[0] if len(held[0]) == n else None
    except Exception:  # a held dataset's own __len__ (NotImplementedError, a lazy index): no wrapper,
        return None  # never a dead check (it took the whole run down: review, 2026-12-06)


def raw_store(ds: Any) -> Any:
    tensors = getattr(ds, "tensors", None)
    if type(ds).__name__ == "TensorDataset" and tensors:
        return tensors[0]
    try:
        n = len(ds)
    except TypeError:
        return None
    for name in RAW_ATTRIBUTES:
        value = getattr(ds, name, None)
        if value is None or isinstance(value, (str, bytes, dict)) or not hasattr(value, "__getitem__"):
            continue
        try:
            if len(value) == n and to_array(value[0]) is not None:
                return value
        except (TypeError, IndexError, KeyError):
            continue
    return None


def has_raw_rows(ds: Any) -> bool:
    return raw_store(base_of(ds)[0]) is not None
