"""Reductions on the hot path, for the passes the time budget samples: device-side, no host sync.

A module output right after its forward (still in cache): ``aminmax``, ``sum``, the 2-norm and
``count_nonzero``, four ops kept as 0-d tensors where the output lives. They reach the host only
when a snapshot is taken (:func:`activation_from_partials`): min, max, mean and the fraction of
exact zeros are exact up to float rounding; the standard deviation comes from the sums (in
float32 for float32 data), bounded by the exact range, so a constant output reads std 0; NaN/Inf
are known to be present (min/max/sum not finite) but not counted.

A gradient at the end of a backward: ``_foreach_norm`` of orders 1, 2 and inf over all of them.

Floating tensors only; everything under ``torch.no_grad()``.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence


def reducible(t: Any, torch: Any) -> bool:
    return t.is_floating_point() and t.layout == torch.strided and not t.is_meta and t.numel() > 0


def relu_like(type_name: str) -> bool:
    """Activations whose dead units are worth counting (outputs >= 0, exact zeros when off)."""
    t = type_name.lower()
    return t == "threshold" or ("relu" in t and not any(k in t for k in ("leaky", "prelu", "rrelu")))


def activation_partials(torch: Any, t: Any, units: bool = False) -> tuple:
    """``(min, max, sum, norm2, nonzero[, live units])`` as 0-d tensors on ``t``'s device.

    ``t`` floating, non-empty. ``units`` (ReLU-like outputs, >= 0): also how many positions of a
    sample (all dims but the batch dim 0) are non-zero for at least one sample of the batch.
    """
    acc = torch.float32 if t.element_size() < 4 else None
    low, high = torch.aminmax(t)
    total = torch.sum(t, dtype=acc) if acc is not None else torch.sum(t)
    norm = torch.linalg.vector_norm(t, 2, dtype=acc) if acc is not None else torch.linalg.vector_norm(t, 2)
    if units and t.dim() >= 2 and t.shape[0] >= 2:
        return (low, high, total, norm, torch.count_nonzero(t), torch.count_nonzero(torch.amax(t, dim=0)))
    return (low, high, total, norm, torch.count_nonzero(t))


def activation_from_partials(count: int, partials: Sequence[Any], batch: int = 0) -> Dict[str, Any]:
    """The snapshot's activation statistics from :func:`activation_partials` (host floats)."""
    values = [float(v.item()) if hasattr(v, "item") else float(v) for v in partials]
    low, high, total, norm, nonzero = values[:5]
    nonzero = int(nonzero)
    dead = None
    if len(values) > 5 and batch >= 2 and count:
        units = count // batch
        dead = {"units": units, "deadUnitCount": units - int(values[5]),
                "deadUnits": (units - int(values[5])) / units if units else None}
    finite = all(math.isfinite(v) for v in (low, high, total, norm))
    out: Dict[str, Any] = {
        "count": count, "mean": None, "std": None, "min": None, "max": None,
        "zeros": (count - nonzero) / count if count else None, "zeroCount": count - nonzero,
        "nan": None, "posinf": None, "neginf": None, "nonFinite": 0 if finite else None,
        "hasNonFinite": not finite,
        "units": None, "deadUnitCount": None, "deadUnits": None,
    }
    if dead is not None:
        out.update(dead)
    if not finite:
        return out
    mean = total / count
    std = None
    if count > 1:
        var = max(norm * norm - count * mean * mean, 0.0) / (count - 1)
        bound = (high - low) / 2.0 * math.sqrt(count / (count - 1))  # no spread can exceed the range
        std = min(math.sqrt(var), bound)
    out.update(mean=mean, std=std, min=low, max=high, nan=0, posinf=0, neginf=0)
    return out


def grad_partials(torch: Any, grads: List[Any]) -> List[tuple]:
    """``(sum|g|, ‖g‖, max|g|)`` per gradient, 0-d tensors on their devices."""
    try:
        ones = torch._foreach_norm(grads, 1)
        twos = torch._foreach_norm(grads, 2)
        tops = torch._foreach_norm(grads, math.inf)
    except Exception:  # old torch, or a dtype foreach does not take
        vn = torch.linalg.vector_norm
        ones = [vn(g, 1) for g in grads]
        twos = [vn(g, 2) for g in grads]
        tops = [vn(g, math.inf) for g in grads]
    return list(zip(ones, twos, tops))


def grad_from_partials(count: int, partials: Optional[Sequence[Any]]) -> Dict[str, Any]:
    one, two, top = (float(v.item()) for v in partials)
    finite = all(math.isfinite(v) for v in (one, two, top))
    if not finite:
        return {"count": count, "meanAbs": None, "maxAbs": None, "norm": None, "nan": None, "inf": None,
                "nonFinite": None, "hasNonFinite": True}
    return {"count": count, "meanAbs": one / count if count else None, "maxAbs": top, "norm": two,
            "nan": 0, "inf": 0, "nonFinite": 0, "hasNonFinite": False}
