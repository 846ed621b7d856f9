"""What the Variables view lists under an expanded tensor: facts, stats, grad, a few values.

Each child is ``(name, value, evaluate_suffix)``; the suffix appended to the parent's
expression re-evaluates the child (``x`` + ``.grad``), or is None when there is no such
expression. Only cheap, non-allocating attributes are read: never ``.T``, ``.H``, ``.mT``,
``.real`` or anything that makes a new tensor the size of the old one. The value slice is
bounded to ``MAX_VALUES`` elements, so at most that many cross from a GPU.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple

from ...spelling import fmt_bytes, fmt_shape
from .api import stats

Child = Tuple[str, Any, Optional[str]]

MAX_VALUES = 100
_LAST_DIMS = 10  # per trailing dimension of the slice; leading dimensions take their first row

_STAT_FIELDS = (
    "count",
    "nan",
    "posinf",
    "neginf",
    "min",
    "max",
    "mean",
    "std",
    "of",
    "true",
    "nnz",
    "density",
    "exact",
    "note",
)


def tensor_children(t: Any) -> List[Child]:
    """The ordered children of a tensor; never raises (a failure becomes an ``error`` child)."""
    try:
        torch = sys.modules["torch"]
        with torch.no_grad():
            return _children(torch, t)
    except Exception as exc:
        return [("error", f"{type(exc).__name__}: {exc}", None)]


def _children(torch, t: Any) -> List[Child]:
    info: Dict[str, Any] = stats(t)
    out: List[Child] = [
        (
            "shape",
            t.shape if not t.is_nested else fmt_shape(info.get("shape", [])),
            ".shape" if not t.is_nested else None,
        ),
        ("dtype", t.dtype, ".dtype"),
        ("device", t.device, ".device"),
        ("layout", t.layout, ".layout"),
        ("memory", fmt_bytes(info.get("nbytes")), None),
        ("stats", {k: info[k] for k in _STAT_FIELDS if k in info}, None),
        ("requires_grad", t.requires_grad, ".requires_grad"),
        ("is_leaf", t.is_leaf, ".is_leaf"),
    ]
    if t.grad_fn is not None:
        out.append(("grad_fn", t.grad_fn, ".grad_fn"))
    if (t.is_leaf and t.requires_grad) or getattr(t, "retains_grad", False):
        out.append(("grad", t.grad, ".grad"))  # reading .grad of other non-leaves warns
    if t.layout == torch.strided and not t.is_nested:
        out += [
            ("stride", t.stride(), ".stride()"),
            ("contiguous", t.is_contiguous(), ".is_contiguous()"),
            ("version", t._version, "._version"),
        ]
    out += _value_children(torch, t)
    return out


def _value_children(torch, t: Any) -> List[Child]:
    if t.is_meta or t.is_nested or t.numel() == 0:
        return []
    if t.layout != torch.strided:
        values = t._values() if t.layout == torch.sparse_coo else t.values()
        head = values.reshape(-1)[:MAX_VALUES] if values.is_contiguous() else values[:MAX_VALUES]
        return [(f"stored values[:{MAX_VALUES}]", _host(torch, head), None)]
    if t.dim() == 0:
        return [("value", _host(torch, t), ".item()")]
    index = bounded_index(tuple(t.shape))
    text = ", ".join(f":{stop}" if stop > 1 or i == t.dim() - 1 else "0" for i, stop in enumerate(index))
    view = t[tuple(slice(0, stop) if stop > 1 or i == t.dim() - 1 else 0 for i, stop in enumerate(index))]
    return [(f"values[{text}]", _host(torch, view), f"[{text}]")]


def bounded_index(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """How many to keep per dimension so that at most ``MAX_VALUES`` elements are copied.

    1-D keeps up to 100; otherwise the last two dimensions keep up to 10 each and every leading
    dimension keeps its first entry (``x[0, 0, :10, :10]`` of an image batch).
    """
    if len(shape) == 1:
        return (min(shape[0], MAX_VALUES),)
    leading = tuple(1 for _ in shape[:-2])
    return leading + tuple(min(d, _LAST_DIMS) for d in shape[-2:])


def _host(torch, t: Any) -> Any:
    from ..stats.tensor_stats import host_values

    digits = _DISPLAY_DIGITS.get(str(t.dtype).replace("torch.", ""))
    values = host_values(t)
    if digits:  # 0.1 in f32 reads 0.1, not 0.10000000149011612
        values = [float(format(v, f".{digits}g")) for v in values]
    if t.dim() == 0:
        return values[0]
    return _nest(values, [int(d) for d in t.shape])


# Significant digits that a value of each dtype really carries.
_DISPLAY_DIGITS = {"float32": 8, "float16": 4, "bfloat16": 3}


def _nest(flat: List[Any], shape: List[int]) -> Any:
    if len(shape) <= 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
