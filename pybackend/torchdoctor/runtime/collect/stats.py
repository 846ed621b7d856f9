"""Statistics for a snapshot, computed when the program is paused (never on the hot path).

- :func:`activation_stats`: exact statistics of a kept module output, with
  :func:`tensor_stats.value_stats` (device-side, exact, NaN/Inf counted) plus the count of exact
  zeros; cached by tensor identity and fingerprint, so a second snapshot at the same stop is free.
- :func:`grad_stats`: mean |g|, max |g|, ‖g‖ and NaN/Inf counts of a gradient, reduced on its
  device in the widest float it has; with NaN/Inf present the magnitudes are over the finite
  values and the counts say how many were not.
- :func:`value_check`: NaN/Inf counts of a parameter's values (through the summaries' cache).

All under ``torch.no_grad()``; nothing is modified, moved or drawn at random.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, List, Optional

from ..stats.blocks import iter_blocks
from ..stats.cache import VALUE_STATS, IdentityCache
from ..stats.fingerprint import fingerprint
from ..stats.tensor_stats import value_stats

BLOCK = 1 << 22  # elements per block of the zero counts: the bool scratch stays 4 MiB

ACTIVATIONS = IdentityCache(maxsize=4096)


def _torch():
    return sys.modules["torch"]


def _finite(value: Optional[float]) -> Optional[float]:
    return value if value is not None and math.isfinite(value) else None


def activation_stats(t: Any) -> Dict[str, Any]:
    """``{count, mean, std, min, max, zeros, zeroCount, nan, posinf, neginf, nonFinite, units,
    deadUnitCount, deadUnits}``: units are the positions of one sample (all dims but dim 0), dead
    ones are 0 for every sample of the batch (None below 2 samples)."""
    return ACTIVATIONS.get_or_compute(t, fingerprint(t), lambda: _activation_stats(t))


def _activation_stats(t: Any) -> Dict[str, Any]:
    torch = _torch()
    with torch.no_grad():
        count = int(t.numel())
        if count == 0:
            return {
                "count": 0,
                "mean": None,
                "std": None,
                "min": None,
                "max": None,
                "zeros": None,
                "zeroCount": 0,
                "nan": 0,
                "posinf": 0,
                "neginf": 0,
                "nonFinite": 0,
                "units": None,
                "deadUnitCount": None,
                "deadUnits": None,
            }
        stats = VALUE_STATS.get_or_compute(t, fingerprint(t), lambda: value_stats(t))
        nonzero = _nonzero(t)
        units = None
        if t.dim() >= 2 and t.shape[0] >= 2:
            units = (count // int(t.shape[0]), _live_units(t))
    dead: Dict[str, Any] = {"units": None, "deadUnitCount": None, "deadUnits": None}
    if units is not None and units[0]:
        dead = {"units": units[0], "deadUnitCount": units[0] - units[1], "deadUnits": (units[0] - units[1]) / units[0]}
    if t.dtype == torch.bool:
        true = int(stats.get("true", nonzero))
        return {
            "count": count,
            "mean": true / count,
            "std": None,
            "min": None,
            "max": None,
            "zeros": (count - nonzero) / count,
            "zeroCount": count - nonzero,
            "nan": 0,
            "posinf": 0,
            "neginf": 0,
            "nonFinite": 0,
            **dead,
        }
    nan, posinf, neginf = int(stats.get("nan", 0)), int(stats.get("posinf", 0)), int(stats.get("neginf", 0))
    out: Dict[str, Any] = {
        "count": count,
        "mean": _finite(stats.get("mean")),
        "std": _finite(stats.get("std")),
        "min": _finite(stats.get("min")),
        "max": _finite(stats.get("max")),
        "zeros": (count - nonzero) / count,
        "zeroCount": count - nonzero,
        "nan": nan,
        "posinf": posinf,
        "neginf": neginf,
        "nonFinite": nan + posinf + neginf,
        **dead,
    }
    if t.dtype.is_complex:
        out["of"] = "abs"
    return out


def _nonzero(t: Any) -> int:
    """Non-zero elements, in bounded blocks (``count_nonzero`` branches per element on the CPU)."""
    return int(sum(int(b.bool().sum().item()) for b in iter_blocks(t, BLOCK)))


def _live_units(t: Any) -> int:
    """Positions of a sample (all dims but dim 0) non-zero for at least one sample."""
    torch = _torch()
    rows = max(1, BLOCK // max(1, t[0].numel()))
    alive = torch.zeros(t.shape[1:], dtype=torch.bool, device=t.device)
    for chunk in t.split(rows, dim=0):
        alive |= chunk.ne(0).any(dim=0)
    return int(alive.sum().item())


def _wide(torch: Any, t: Any) -> Any:
    return torch.float32 if t.device.type == "mps" else torch.float64


def grad_stats(g: Any) -> Dict[str, Any]:
    """``{count, meanAbs, maxAbs, norm, nan, inf}`` of one gradient."""
    torch = _torch()
    with torch.no_grad():
        count = int(g.numel())
        if count == 0:
            return {"count": 0, "meanAbs": None, "maxAbs": None, "norm": None, "nan": 0, "inf": 0}
        x = g.abs() if g.dtype.is_complex else g
        wide = _wide(torch, x)
        norm = torch.linalg.vector_norm
        row = torch.stack([norm(x, 1, dtype=wide), norm(x, 2, dtype=wide), norm(x, float("inf"), dtype=wide)])
        one, two, top = row.tolist()
        nan = inf = 0
        if not (math.isfinite(one) and math.isfinite(two) and math.isfinite(top)):
            finite = torch.isfinite(x)
            nan = int(torch.isnan(x).sum().item())
            inf = int(torch.isinf(x).sum().item())
            clean = torch.where(finite, x, torch.zeros((), dtype=x.dtype, device=x.device))
            row = torch.stack(
                [norm(clean, 1, dtype=wide), norm(clean, 2, dtype=wide), norm(clean, float("inf"), dtype=wide)]
            )
            one, two, top = row.tolist()
    good = count - nan - inf
    return {
        "count": count,
        "meanAbs": _finite(one / good) if good else None,
        "maxAbs": _finite(top) if good else None,
        "norm": _finite(two) if good else None,
        "nan": nan,
        "inf": inf,
    }


def device_grad_stats(count: int, reduced: Any) -> Dict[str, Any]:
    """The same dict from ``(sum|g|, ‖g‖, max|g|, non-finite count)`` reduced at backward time."""
    torch = _torch()
    one, two, top, bad = (float(v.to(torch.float64).item()) if hasattr(v, "item") else float(v) for v in reduced)
    bad = int(bad)
    return {
        "count": count,
        "meanAbs": _finite(one / count) if count and not bad else None,
        "maxAbs": _finite(top) if not bad else None,
        "norm": _finite(two) if not bad else None,
        "nan": None if bad else 0,
        "inf": None if bad else 0,
        "nonFinite": bad,
    }


def value_check(p: Any) -> Dict[str, Any]:
    """NaN/Inf counts and the range of a parameter's values."""
    torch = _torch()
    with torch.no_grad():
        stats = VALUE_STATS.get_or_compute(p, fingerprint(p), lambda: value_stats(p))
    return {
        "nan": int(stats.get("nan", 0)),
        "inf": int(stats.get("posinf", 0)) + int(stats.get("neginf", 0)),
        "mean": _finite(stats.get("mean")),
        "std": _finite(stats.get("std")),
        "min": _finite(stats.get("min")),
        "max": _finite(stats.get("max")),
    }


def total_numel(params: List[Any]) -> int:
    return sum(int(p.numel()) for p in params)
