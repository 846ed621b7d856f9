"""``stats()`` of a list/tuple/dict or record (dataclass, ``ModelOutput``) holding tensors or
arrays: counts, size, where the NaN is.

Walks at most ``MAX_LEAVES`` tensors (nested containers included, up to ``MAX_DEPTH``) and
reports NaN/Inf by the top-level key, field or index that leads to them. Returns None when the
container holds no tensors, so the debugger keeps its own presentation for ordinary lists.

Aliases count once: ``[t] * 10`` is 10 items but 1 distinct tensor, and memory is counted per
storage (two views of one buffer cost the buffer once), as it is in the program.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ...spelling import clip
from .aggregates import describe_array_cached
from .kinds import NDARRAY, TENSOR, is_leaf_kind, is_plain_container
from .tensor_info import describe_tensor

MAX_LEAVES = 256
MAX_DEPTH = 3
MAX_SCAN = 2000  # items looked at in all, tensors or not, nested containers included


def describe_container(obj: Any) -> Optional[Dict[str, object]]:
    found: List[Tuple[str, str, Dict[str, Any]]] = []
    sources: List[Any] = []
    complete = _walk(obj, found, [MAX_SCAN], sources=sources)
    if not found:
        return None
    leaves = [leaf for _, _, leaf in found]
    shapes = {tuple(leaf.get("shape") or ()) for leaf in leaves}
    distinct = len({id(item) for item in sources})
    info: Dict[str, object] = {
        "kind": "container",
        "type": type(obj).__name__,
        "len": _length(obj),
        "tensors": sum(1 for _, kind, _ in found if kind == TENSOR),
        "arrays": sum(1 for _, kind, _ in found if kind == NDARRAY),
        "nbytes": _distinct_bytes(sources, leaves),
        "dtypes": sorted({str(leaf["dtype"]) for leaf in leaves}),
        "devices": sorted({str(leaf["device"]) for leaf in leaves if leaf.get("device")}),
        "shape": list(shapes.pop()) if len(shapes) == 1 else None,
        "nan_in": _labels_with(found, "nan"),
        "inf_in": _labels_with(found, "posinf", "neginf"),
        "complete": complete,
    }
    if distinct < len(sources):
        info["distinct"] = distinct
    return info


def _length(obj: Any) -> int:
    try:
        return len(obj)
    except TypeError:  # a dataclass: its fields
        return len(dataclasses.fields(obj))


def _distinct_bytes(sources: List[Any], leaves: List[Dict[str, Any]]) -> int:
    """Bytes held, one count per storage: the largest extent any of its views reaches."""
    per_storage: Dict[Any, int] = {}
    for item, leaf in zip(sources, leaves):
        key, size = _storage_key(item, leaf)
        per_storage[key] = max(per_storage.get(key, 0), size)
    return sum(per_storage.values())


def _storage_key(item: Any, leaf: Dict[str, Any]) -> Tuple[Any, int]:
    size = int(leaf.get("stored_nbytes") or leaf.get("nbytes") or 0)
    try:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(item, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():  # a user subclass is not re-entered
                storage = item.untyped_storage()
                pointer, device, stored = storage.data_ptr(), str(item.device), int(storage.nbytes())
            if pointer:
                return ("storage", pointer, device), min(size, stored)
        base = getattr(item, "base", None)
        while base is not None and getattr(base, "base", None) is not None:
            base = base.base
        owner = base if base is not None else item
        pointer = owner.__array_interface__["data"][0] if hasattr(owner, "__array_interface__") else None
        if pointer:
            return ("array", pointer), size
    except Exception:
        pass
    return ("object", id(item)), size


def _walk(
    obj: Any,
    found: List,
    budget: List[int],
    label: Optional[str] = None,
    depth: int = 0,
    sources: Optional[List] = None,
) -> bool:
    """Collect ``(top-level label, kind, stats)`` per leaf; False when a bound cut the walk.

    ``budget`` is the one shared count of items left to look at, so a list of lists of lists
    costs at most ``MAX_SCAN`` looks, not its size.
    """
    complete = True
    for key, item in _items(obj):
        if budget[0] <= 0 or len(found) >= MAX_LEAVES:
            return False
        budget[0] -= 1
        top = label if label is not None else key
        kind = is_leaf_kind(item)
        if kind is not None and sources is not None:
            sources.append(item)
        if kind == TENSOR:
            found.append((top, kind, describe_tensor(item, with_grad=False)))
        elif kind == NDARRAY:
            found.append((top, kind, describe_array_cached(item)))  # cached, within the request's budget
        elif depth + 1 < MAX_DEPTH and is_plain_container(type(item)):
            complete = _walk(item, found, budget, top, depth + 1, sources) and complete
    return complete


def _items(obj: Any) -> Iterator[Tuple[str, Any]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield _key_label(key), value
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for field in dataclasses.fields(obj):
            yield field.name, getattr(obj, field.name, None)
    else:
        for index, value in enumerate(obj):
            yield f"[{index}]", value


def _key_label(key: Any) -> str:
    try:
        return clip(repr(key), 40)
    except Exception:  # a user key whose repr raises still gets a label
        return f"<{type(key).__name__}>"


def _labels_with(found: List, *fields: str) -> List[str]:
    labels: List[str] = []
    for label, _, leaf in found:
        if any(leaf.get(field) for field in fields) and label not in labels:
            labels.append(label)
    return labels
