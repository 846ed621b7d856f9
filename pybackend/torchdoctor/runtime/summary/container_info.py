"""``stats()`` of a list/tuple/dict holding tensors or arrays: counts, size, where the NaN is.

Walks at most ``MAX_LEAVES`` tensors (nested containers included, up to ``MAX_DEPTH``) and
reports NaN/Inf by the top-level key or index that leads to them. Returns None when the
container holds no tensors, so the debugger keeps its own presentation for ordinary lists.
"""

from __future__ import annotations

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
    complete = _walk(obj, found, [MAX_SCAN])
    if not found:
        return None
    leaves = [leaf for _, _, leaf in found]
    shapes = {tuple(leaf["shape"]) for leaf in leaves}
    return {
        "kind": "container",
        "type": type(obj).__name__,
        "len": len(obj),
        "tensors": sum(1 for _, kind, _ in found if kind == TENSOR),
        "arrays": sum(1 for _, kind, _ in found if kind == NDARRAY),
        "nbytes": sum(int(leaf.get("nbytes") or 0) for leaf in leaves),
        "dtypes": sorted({str(leaf["dtype"]) for leaf in leaves}),
        "devices": sorted({str(leaf["device"]) for leaf in leaves if leaf.get("device")}),
        "shape": list(shapes.pop()) if len(shapes) == 1 else None,
        "nan_in": _labels_with(found, "nan"),
        "inf_in": _labels_with(found, "posinf", "neginf"),
        "complete": complete,
    }


def _walk(obj: Any, found: List, budget: List[int], label: Optional[str] = None, depth: int = 0) -> bool:
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
        if kind == TENSOR:
            found.append((top, kind, describe_tensor(item, with_grad=False)))
        elif kind == NDARRAY:
            found.append((top, kind, describe_array_cached(item)))  # cached, within the request's budget
        elif depth + 1 < MAX_DEPTH and is_plain_container(type(item)):
            complete = _walk(item, found, budget, top, depth + 1) and complete
    return complete


def _items(obj: Any) -> Iterator[Tuple[str, Any]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield _key_label(key), value
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
