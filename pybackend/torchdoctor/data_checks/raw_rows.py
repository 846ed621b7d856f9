"""The stored rows behind a dataset, when it keeps them in one array (duplicates hash them all)."""

from __future__ import annotations

from typing import Any, Optional

from .arrays import to_array

RAW_ATTRIBUTES = ("data", "images", "x", "X", "inputs", "features")


def base_of(obj: Any) -> tuple[Any, Optional[list]]:
    """(the dataset behind Subsets, the base index of each index) - indices None: identity."""
    mapping: Optional[list] = None
    depth = 0
    while type(obj).__name__ == "Subset" and hasattr(obj, "indices") and depth < 10:
        idx = [int(i) for i in obj.indices]
        mapping = idx if mapping is None else [idx[i] for i in mapping]
        obj, depth = obj.dataset, depth + 1
    return obj, mapping


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
