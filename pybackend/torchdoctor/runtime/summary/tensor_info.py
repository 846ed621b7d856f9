"""``stats()`` of one torch tensor: what it is (shape, dtype, device, autograd) and its values.

Value statistics come from :mod:`tensor_stats` through the identity cache; everything that can
change without touching the data (``requires_grad``, ``.grad``) is read fresh every time.
Runs under ``torch.no_grad()`` so nothing here records into the user's autograd graph.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional

from ...spelling import short_dtype
from ..stats.blocks import collapse_expanded
from ..stats.cache import VALUE_STATS
from ..stats.fingerprint import fingerprint
from ..stats.tensor_stats import UnsupportedDtype, host_values, value_stats

# Tensors this small also show their values in the one-line summary.
SMALL_VALUES = 8


def describe_tensor(t: Any, with_grad: bool = True) -> Dict[str, object]:
    torch = sys.modules["torch"]
    with torch.no_grad():
        info = _header(torch, t)
        info.update(_values(torch, t))
        if with_grad:
            _add_grad(torch, t, info)
    return info


def _header(torch, t: Any) -> Dict[str, object]:
    kind = type(t).__name__
    info: Dict[str, object] = {
        "kind": "tensor",
        "type": "tensor" if type(t) is torch.Tensor else kind,
        "shape": _shape(t),
        "dtype": short_dtype(str(t.dtype)),
        "device": str(t.device),
        "layout": str(t.layout).replace("torch.", ""),
        "numel": int(t.numel()),
        "nbytes": _nbytes(torch, t),
        "requires_grad": bool(t.requires_grad),
        "is_leaf": bool(t.is_leaf),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
    }
    if t.layout == torch.strided and not t.is_nested:
        _, multiplicity = collapse_expanded(t)
        if multiplicity > 1:
            info["expanded"] = multiplicity
    return info


def _shape(t: Any) -> list:
    if t.is_nested:  # ragged: only the outer size is fixed; ``t.shape`` raises
        return [int(t.size(0))] + [None] * (t.dim() - 1)
    return [int(d) for d in t.shape]


def _nbytes(torch, t: Any) -> Optional[int]:
    try:
        if t.layout == torch.strided:
            return int(t.numel() * t.element_size())
        if t.layout == torch.sparse_coo:
            return int(_bytes_of(t._indices()) + _bytes_of(t._values()))
        return int(sum(_bytes_of(x) for x in _compressed_parts(torch, t)))
    except Exception:
        return None


def _bytes_of(x: Any) -> int:
    return x.numel() * x.element_size()


def _compressed_parts(torch, t: Any):
    if t.layout in (torch.sparse_csr, torch.sparse_bsr):
        return (t.crow_indices(), t.col_indices(), t.values())
    return (t.ccol_indices(), t.row_indices(), t.values())


def _values(torch, t: Any) -> Dict[str, object]:
    """The value part: statistics, or a note saying why there are none."""
    if t.is_meta:
        return {"note": "no data (meta)"}
    if t.is_nested:
        return {"note": "nested (ragged, no statistics)"}
    if t.layout != torch.strided:
        return _sparse_values(torch, t)
    if t.numel() == 0:
        return {"note": "empty"}
    try:
        out = dict(VALUE_STATS.get_or_compute(t, fingerprint(t), lambda: value_stats(t)))
    except UnsupportedDtype as exc:
        return {"note": f"no arithmetic for {exc}"}
    if t.dim() == 0 or t.numel() <= SMALL_VALUES:
        out.update(_small_values(t))
    return out


def _small_values(t: Any) -> Dict[str, object]:
    # At most SMALL_VALUES scalars cross to the host.
    values = host_values(t)
    return {"value": values[0]} if t.dim() == 0 else {"values": values}


def _sparse_values(torch, t: Any) -> Dict[str, object]:
    """Stats over all elements, implicit zeros included; NaN/Inf counted in the stored values."""
    return dict(VALUE_STATS.get_or_compute(t, fingerprint(t), lambda: _sparse_stats(torch, t)))


def _sparse_stats(torch, t: Any) -> Dict[str, object]:
    if t.layout == torch.sparse_coo:
        # An uncoalesced COO tensor may list an index twice; coalescing (a copy) sums them.
        values = (t if t.is_coalesced() else t.coalesce())._values()
    else:
        values = t.values()
    stored, dense_numel = int(values.numel()), int(t.numel())
    out = value_stats(values, implicit_zeros=max(dense_numel - stored, 0))
    out["nnz"] = int(t._nnz()) if t.layout == torch.sparse_coo else stored
    out["density"] = stored / dense_numel if dense_numel else 0.0
    return out


def _add_grad(torch, t: Any, info: Dict[str, object]) -> None:
    """Leaves that require grad get ``grad``: its summary, or None before the first backward.

    ``.grad`` of a non-leaf is never read: torch warns on that, and warnings are a side effect.
    """
    if not (t.is_leaf and t.requires_grad) and not getattr(t, "retains_grad", False):
        return
    grad = t.grad
    info["grad"] = None if grad is None else describe_tensor(grad, with_grad=False)
