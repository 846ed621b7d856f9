"""What the Variables view lists under an expanded tensor (facts, stats, grad, a few values) or
module (parameters, buffers, submodules, mode, device, dtype, the raw attributes folded).

Each child is ``(name, value, evaluate_suffix)``; the suffix appended to the parent's
expression re-evaluates the child (``x`` + ``.grad``), or is None when there is no such
expression. Only cheap, non-allocating attributes are read: never ``.T``, ``.H``, ``.mT``,
``.real`` or anything that makes a new tensor the size of the old one. The value slice is
bounded to ``MAX_VALUES`` elements, so at most that many cross from a GPU.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...spelling import clip, fmt_bytes, fmt_shape
from ..stats.guard import quiet
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


def can_expand(cls: Any) -> bool:
    """Tensors and modules list our children; anything else keeps the debugger's own."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(cls, type):
        return False
    return issubclass(cls, torch.Tensor) or issubclass(cls, torch.nn.Module)


def children_of(obj: Any) -> List[Child]:
    """The children of an expanded tensor or module; never raises."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.nn.Module):
        return module_children(obj)
    return tensor_children(obj)


def tensor_children(t: Any) -> List[Child]:
    """The ordered children of a tensor; never raises. Each child is read on its own, so a
    tensor that refuses some reads (inference mode, FakeTensor, functorch-wrapped, a lazy
    module's UninitializedParameter) still lists its header: a failed read says why. As for the
    line: no warning reaches the user and a subclass's ``__torch_function__`` is not re-entered
    (its ``shape``, ``stride()`` and value slice are read as a plain tensor's)."""
    try:
        torch = sys.modules["torch"]
        with quiet(), torch.no_grad(), torch._C.DisableTorchFunctionSubclass():
            return _children(torch, t)
    except Exception as exc:
        return [("error", f"{type(exc).__name__}: {exc}", None)]


def _read(name: str, read: Callable[[], Any], suffix: Optional[str]) -> Child:
    try:
        return (name, read(), suffix)
    except Exception as exc:
        return (name, unavailable(exc), None)


def unavailable(exc: BaseException) -> str:
    return clip(f"<unavailable: {type(exc).__name__}: {exc}>", 160)


def _children(torch, t: Any) -> List[Child]:
    lazy = _is_uninitialized(torch, t)
    info: Dict[str, Any] = {} if lazy else stats(t)
    nested = _ask(lambda: bool(t.is_nested), False)
    out: List[Child] = [
        _read(
            "shape",
            lambda: t.shape if not nested else fmt_shape(info.get("shape", [])),
            ".shape" if not nested else None,
        ),
        _read("dtype", lambda: t.dtype, ".dtype"),
        _read("device", lambda: t.device, ".device"),
        _read("layout", lambda: t.layout, ".layout"),
    ]
    if lazy:
        out.append(("note", "uninitialized (lazy): no shape or values until the module's first forward", None))
        out.append(_read("requires_grad", lambda: t.requires_grad, ".requires_grad"))
        return out
    out += [
        ("memory", fmt_bytes(info.get("nbytes")), None),
        ("stats", {k: info[k] for k in _STAT_FIELDS + ("error",) if k in info}, None),
        _read("requires_grad", lambda: t.requires_grad, ".requires_grad"),
        _read("is_leaf", lambda: t.is_leaf, ".is_leaf"),
    ]
    if _ask(lambda: t.grad_fn is not None, False):
        out.append(_read("grad_fn", lambda: t.grad_fn, ".grad_fn"))
    if _ask(lambda: (t.is_leaf and t.requires_grad) or getattr(t, "retains_grad", False), False):
        out.append(_read("grad", lambda: t.grad, ".grad"))  # reading .grad of other non-leaves warns
    inference = _ask(lambda: bool(t.is_inference()), False)
    if inference:
        out.append(("inference", True, ".is_inference()"))  # no version counter, no autograd
    if _ask(lambda: t.layout == torch.strided, False) and not nested:
        out += [
            _read("stride", lambda: t.stride(), ".stride()"),
            _read("contiguous", lambda: t.is_contiguous(), ".is_contiguous()"),
        ]
        if not inference:
            out.append(_read("version", lambda: t._version, "._version"))
    try:
        out += _value_children(torch, t)
    except Exception as exc:
        out.append(("values", unavailable(exc), None))
    return out


def _ask(read: Callable[[], Any], default: Any) -> Any:
    try:
        return read()
    except Exception:
        return default


def _is_uninitialized(torch, t: Any) -> bool:
    lazy = getattr(torch.nn.parameter, "UninitializedTensorMixin", None)
    return lazy is not None and isinstance(t, lazy)


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

    # A quantized tensor's values come back dequantized to float32: as many digits as those.
    digits = _DISPLAY_DIGITS.get("float32" if t.is_quantized else str(t.dtype).replace("torch.", ""))
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


# -- modules ---------------------------------------------------------------------------------


class RawAttributes:
    """Everything pydevd would have listed for the module (``__dict__``, methods, class
    attributes), folded under one entry: its children are the module's own attributes."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __dir__(self) -> List[str]:
        try:
            return sorted(set(dir(self._target)))
        except Exception:
            return []

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_target"), name)

    def __repr__(self) -> str:
        try:
            return f"{len(self.__dir__())} attributes of {type(self._target).__name__}"
        except Exception:
            return "attributes"


def module_children(m: Any) -> List[Child]:
    """A module's own parameters and buffers (each shown with its summary, gradient included),
    its child modules, then ``mode`` (train/eval), ``device``, ``dtype`` and the raw attributes. Never
    raises: a failed read becomes an ``error`` child and the rest is still listed."""
    try:
        torch = sys.modules["torch"]
        with torch.no_grad():
            out = _module_members(torch, m) + _module_facts(torch, m)
    except Exception as exc:
        out = [("error", unavailable(exc), None)]
    out.append(("raw attributes", RawAttributes(m), None))
    return out


def _module_members(torch, m: Any) -> List[Child]:
    out: List[Child] = []
    for name, p in m.named_parameters(recurse=False):
        out.append((name, p, _tensor_suffix(torch, m, name)))
    for name, b in m.named_buffers(recurse=False):
        out.append((name, b, _tensor_suffix(torch, m, name)))
    indexed = isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential))
    keyed = isinstance(m, torch.nn.ModuleDict)
    for name, child in m.named_children():
        suffix: Optional[str]
        if indexed and name.isdigit():
            suffix = f"[{name}]"
        elif keyed or not name.isidentifier():
            suffix = f"[{name!r}]" if keyed else None
        else:
            suffix = "." + name
        out.append((name, child, suffix))
    return out


def _tensor_suffix(torch, m: Any, name: str) -> Optional[str]:
    """How a parameter or buffer is read back: ``pl[0]`` in a ``ParameterList``, ``pd['a-b']``
    in a ``ParameterDict`` (``pl.0`` is no expression), ``.name`` elsewhere, None when ``name``
    is no identifier (``register_buffer("running-mean", ...)``: only ``getattr`` reads it)."""
    if isinstance(m, torch.nn.ParameterList) and name.isdigit():
        return f"[{name}]"
    if isinstance(m, torch.nn.ParameterDict):
        return f"[{name!r}]"
    return "." + name if name.isidentifier() else None


def _module_facts(torch, m: Any) -> List[Child]:
    tensors = list(m.parameters()) + list(m.buffers())
    devices = sorted({str(t.device) for t in tensors})
    dtypes = sorted({str(p.dtype).replace("torch.", "") for p in m.parameters()})
    out: List[Child] = [("mode", "train" if m.training else "eval", None)]
    if len(devices) == 1:
        out.append(("device", tensors[0].device, None))
    elif devices:
        out.append(("device", "mixed: " + ", ".join(devices), None))
    if len(dtypes) == 1:
        out.append(("dtype", next(iter(m.parameters())).dtype, None))
    elif dtypes:
        out.append(("dtype", "mixed: " + ", ".join(dtypes), None))
    return out
