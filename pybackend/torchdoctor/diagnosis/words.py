"""Names, percentages and suggested values as the verdicts write them.

Numbers, counts and shapes are spelled by ``torchdoctor.spelling``, as everywhere else
(``mag``, ``count`` and ``shape`` are its functions under the names the rules use).
"""

from __future__ import annotations

import math
from typing import Iterable, Optional, Tuple

from ..spelling import fmt_count as count  # noqa: F401  (re-exported for the rules)
from ..spelling import fmt_dims as shape  # noqa: F401
from ..spelling import fmt_num as mag  # noqa: F401


def pct(fraction: Optional[float]) -> str:
    if fraction is None:
        return "?"
    p = fraction * 100.0
    if p == 100.0 or p == 0.0:
        return f"{p:.0f}%"
    if 99.5 <= p < 100.0:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


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
    best: Optional[Tuple[float, float]] = None  # (distance on the log scale, candidate)
    for e in (exp - 1, exp, exp + 1):
        for m in (1, 2, 5):
            candidate = m * 10.0**e
            d = abs(math.log10(candidate) - math.log10(value))
            if best is None or d < best[0]:
                best = (d, candidate)
    assert best is not None  # nine candidates were compared
    return float(f"{best[1]:.12g}")


def plain(value: float) -> str:
    """A 1-2-5 number without float noise: ``0.5``, ``2``, ``50``, ``0.002``."""
    if value == int(value):
        return str(int(value))
    return f"{value:.12g}"
