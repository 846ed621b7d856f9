"""Numbers, shapes and names as the verdicts write them."""

from __future__ import annotations

import math
from typing import Any, Iterable, Optional


def mag(value: Optional[float]) -> str:
    """``3.2e-08``, ``0.0042``, ``12.5``, ``1.4e+03``; ``0`` for zero; ``?`` for unknown."""
    if value is None:
        return "?"
    if value == 0:
        return "0"
    a = abs(value)
    if 1e-3 <= a < 1e3:
        return f"{value:.3g}"
    return f"{value:.2g}"


def pct(fraction: Optional[float]) -> str:
    if fraction is None:
        return "?"
    p = fraction * 100.0
    if p == 100.0 or p == 0.0:
        return f"{p:.0f}%"
    if 99.5 <= p < 100.0:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


def count(n: float) -> str:
    """``5.54K``, ``1.2M``, ``812``."""
    n = float(n)
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{int(n)}"


def shape(dims: Any) -> str:
    if not isinstance(dims, list):
        return "?"
    return "(" + ", ".join(str(d) for d in dims) + ")"


def layer(path: str, type_name: str = "") -> str:
    """```fc1` (Linear)``; the model itself is ``the model (TinyCNN)``."""
    if not path:
        return f"the model ({type_name})" if type_name else "the model"
    return f"`{path}` ({type_name})" if type_name else f"`{path}`"


def names(items: Iterable[str], limit: int = 3) -> str:
    items = [f"`{i}`" for i in items]
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


def nice(value: float) -> float:
    """The 1-2-5 number nearest to ``value`` on a log scale (a max-norm people write)."""
    if not (value > 0 and math.isfinite(value)):
        return 1.0
    exp = math.floor(math.log10(value))
    best = None
    for e in (exp - 1, exp, exp + 1):
        for m in (1, 2, 5):
            candidate = m * 10.0 ** e
            d = abs(math.log10(candidate) - math.log10(value))
            if best is None or d < best[0]:
                best = (d, candidate)
    return float(f"{best[1]:.12g}")


def plain(value: float) -> str:
    """A 1-2-5 number without float noise: ``0.5``, ``2``, ``50``, ``0.002``."""
    if value == int(value):
        return str(int(value))
    return f"{value:.12g}"
