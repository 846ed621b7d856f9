"""``stats()`` of one torch tensor: what it is (shape, dtype, device, autograd) and its values.

Value statistics come from :mod:`tensor_stats` through the identity cache; everything that can
change without touching the data (``requires_grad``, ``.grad``) is read fresh every time.
Runs under ``torch.no_grad()`` so nothing here records into the user's autograd graph, with
warnings silenced, and under ``DisableTorchFunctionSubclass`` so a user subclass's
``__torch_function__`` is never re-entered.

A failure never costs the line: every header field is read on its own (a field that raises is
left out), and when the values cannot be read the line keeps its header and says why in a few
words (``note``). Only the budget's ``OutOfTime`` passes through: the cache turns it into
``stats…``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Optional

from ...spelling import clip, short_dtype
from ..stats.blocks import collapse_expanded
from ..stats.budget import OutOfTime
from ..stats.cache import VALUE_STATS
from ..stats.fingerprint import fingerprint
from ..stats.guard import quiet
from ..stats.tensor_stats import UnsupportedDtype, host_values, value_stats
from .special_tensors import layout_words, outside_transforms, plain_view, quantization

# Tensors this small also show their values in the one-line summary.
SMALL_VALUES = 8


def describe_tensor(t: Any, with_grad: bool = True) -> Dict[str, object]:
    torch = sys.modules["torch"]
    with quiet(), torch.no_grad(), torch._C.DisableTorchFunctionSubclass():
        info = _header(torch, t)
        try:
            plain, note = plain_view(torch, t)
            with outside_transforms(torch, t, plain):
                info.update(_values(torch, t, plain) if plain is not None else {"note": note})
            if note and note.startswith("uninitialized"):
                info["shape"] = None  # torch reports [0]: the shape is not known yet
            if plain is not None and note:
                info["source"] = note
        except OutOfTime:
            raise
        except Exception as exc:  # the header stands; the reason replaces the statistics
            info["note"] = "no statistics: " + _reason(exc)
        if with_grad:
            _field(info, "grad", lambda: _grad(torch, t), absent=True)
    return info


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return clip(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 80)


_ABSENT = object()


def _field(info: Dict[str, object], key: str, read: Callable[[], Any], absent: bool = False) -> None:
    """``info[key] = read()``, or nothing when ``read`` raises (or returns ``_ABSENT``)."""
    try:
        value = read()
    except OutOfTime:
        raise
    except Exception:
        return
    if value is not _ABSENT:
        info[key] = value


def _header(torch, t: Any) -> Dict[str, object]:
    """What is free to know: kind, shape, dtype, device, layout, size, autograd, mode."""
    info: Dict[str, object] = {"kind": "tensor", "type": "tensor" if type(t) is torch.Tensor else type(t).__name__}
    _field(info, "shape", lambda: _shape(t))
    _field(info, "dtype", lambda: short_dtype(str(t.dtype)))
    _field(info, "device", lambda: str(t.device))
    _field(info, "layout", lambda: str(t.layout).replace("torch.", ""))
    _field(info, "numel", lambda: int(t.numel()))
    _field(info, "nbytes", lambda: _nbytes(torch, t))
    _field(info, "requires_grad", lambda: bool(t.requires_grad))
    _field(info, "is_leaf", lambda: bool(t.is_leaf))
    _field(info, "grad_fn", lambda: type(t.grad_fn).__name__ if t.grad_fn is not None else None)
    _field(info, "inference", lambda: True if t.is_inference() else _ABSENT)
    _field(info, "quantization", lambda: quantization(t) or _ABSENT)
    _field(info, "layout_words", lambda: layout_words(torch, t) or _ABSENT)
    layout_facts = info.pop("layout_words", None)
    if isinstance(layout_facts, dict):
        info.update(layout_facts)
    info.setdefault("shape", [])
    info.setdefault("dtype", "?")
    _field(info, "expanded", lambda: _expanded(torch, t, info))
    if info.get("expanded") is None:
        info.pop("expanded", None)
    return info


def _expanded(torch, t: Any, info: Dict[str, object]) -> Optional[int]:
    """Stride-0 repetition (``expand``): the factor, and the bytes really stored."""
    if t.layout != torch.strided or t.is_nested or t.numel() == 0:
        return None  # an empty tensor repeats nothing, whatever its strides say
    base, multiplicity = collapse_expanded(t)
    if multiplicity <= 1:
        return None
    info["stored_nbytes"] = int(base.numel() * base.element_size())
    return multiplicity


def _shape(t: Any) -> list:
    if t.is_nested and t.layout == getattr(sys.modules["torch"], "jagged", None):
        # jagged: the ragged dimension is symbolic (``j1``), the others are ordinary sizes
        return [d if type(d) is int else None for d in t.shape]
    if t.is_nested:  # strided nested: only the outer size is fixed; ``t.shape`` raises
        return [int(t.size(0))] + [None] * (t.dim() - 1)
    return [int(d) for d in t.shape]


def _nbytes(torch, t: Any) -> Optional[int]:
    try:
        if t.layout == torch.strided:
            return int(t.numel() * t.element_size())
        if t.layout == torch.sparse_coo:
            return int(_bytes_of(t._indices()) + _bytes_of(t._values()))
        if t.layout == getattr(torch, "jagged", None):  # the packed values, row offsets and lengths
            lengths = vars(t).get("_lengths")
            return int(
                _bytes_of(t._values) + _bytes_of(t._offsets) + (_bytes_of(lengths) if lengths is not None else 0)
            )
        return int(sum(_bytes_of(x) for x in _compressed_parts(torch, t)))
    except Exception:
        return None


def _bytes_of(x: Any) -> int:
    return x.numel() * x.element_size()


def _compressed_parts(torch, t: Any):
    if t.layout in (torch.sparse_csr, torch.sparse_bsr):
        return (t.crow_indices(), t.col_indices(), t.values())
    return (t.ccol_indices(), t.row_indices(), t.values())


def _values(torch, t: Any, plain: Any) -> Dict[str, object]:
    """The value part of ``plain`` (cached under ``t``): statistics, or a note saying why none."""
    if plain.is_meta:
        return {"note": "no data (meta)"}
    if plain.is_nested:
        return {"note": "nested (ragged, no statistics)"}
    if plain.layout != torch.strided:
        return _sparse_values(torch, t, plain)
    if plain.numel() == 0:
        return {"note": "empty"}
    try:
        out = dict(VALUE_STATS.get_or_compute(t, fingerprint(plain), lambda: value_stats(plain)))
    except UnsupportedDtype as exc:
        return {"note": f"no arithmetic for {exc}"}
    if plain.dim() == 0 or plain.numel() <= SMALL_VALUES:
        out.update(_small_values(plain))
    return out


def _small_values(t: Any) -> Dict[str, object]:
    # At most SMALL_VALUES scalars cross to the host.
    values = host_values(t)
    return {"value": values[0]} if t.dim() == 0 else {"values": values}


def _sparse_values(torch, t: Any, plain: Any) -> Dict[str, object]:
    """Stats over all elements, implicit zeros included; NaN/Inf counted in the stored values."""
    return dict(VALUE_STATS.get_or_compute(t, fingerprint(plain), lambda: _sparse_stats(torch, plain)))


def _sparse_stats(torch, t: Any) -> Dict[str, object]:
    coalesced = None
    if t.layout == torch.sparse_coo:
        # An uncoalesced COO tensor may list an index twice; coalescing (a copy) sums them.
        coalesced = t if t.is_coalesced() else t.coalesce()
        values = coalesced._values()
    else:
        values = t.values()
    stored, dense_numel = int(values.numel()), int(t.numel())
    out = value_stats(values, implicit_zeros=max(dense_numel - stored, 0))
    out["nnz"] = int(t._nnz()) if coalesced is not None else stored
    # An index listed twice (an Embedding(sparse=True) gradient): the distinct positions. Both
    # counts are of indices, not elements (a hybrid tensor's value is a dense row).
    if coalesced is not None and int(coalesced._nnz()) != out["nnz"]:
        out["positions"] = int(coalesced._nnz())
    out["density"] = stored / dense_numel if dense_numel else 0.0
    return out


def _grad(torch, t: Any) -> Any:
    """Leaves that require grad get ``grad``: its summary, or None before the first backward.

    ``.grad`` of a non-leaf is never read: torch warns on that, and warnings are a side effect.
    """
    if not (t.is_leaf and t.requires_grad) and not getattr(t, "retains_grad", False):
        return _ABSENT
    grad = t.grad
    return None if grad is None else describe_tensor(grad, with_grad=False)
