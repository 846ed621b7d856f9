"""Combine per-block partial statistics into exact totals (Chan et al.'s parallel variance).

Each block reports ``(n, sum, m2, min, max, nan, posinf, neginf[, zeros])`` over its finite
values, where ``m2`` is the sum of squared deviations from the block's own mean and ``zeros``
counts its values equal to 0 (optional: rows without it count none). Combining centred sums keeps
full precision even when the mean dwarfs the spread (``x = 1000 + noise``), which the one-pass
``E[x²] - E[x]²`` formula does not. Pure Python floats: it runs after the device work is done.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, Iterable, Optional, Sequence

Row = Sequence[float]

# Integers beyond this lose their low bits as float64: 2**62 + 1 and 2**62 + 3 look equal.
EXACT_IN_FLOAT64 = 1 << 53


def repeat(row: Row, multiplicity: int) -> Row:
    """The partials of a block whose every element occurs ``multiplicity`` times (expanded views):
    counts, sums and squared deviations scale; min and max do not."""
    n, s, m2, low, high, nan, posinf, neginf = row[:8]
    k = multiplicity
    zeros = row[8] * k if len(row) > 8 else 0
    return (n * k, s * k, m2 * k, low, high, nan * k, posinf * k, neginf * k, zeros)


def combine(rows: Iterable[Row]) -> Dict[str, object]:
    """Totals of ``rows``: counts (zeros included), finite min/max, mean and sample std."""
    rows = [tuple(float(v) for v in row) for row in rows]
    count = sum(row[0] for row in rows)
    nan = int(sum(row[5] for row in rows))
    posinf = int(sum(row[6] for row in rows))
    neginf = int(sum(row[7] for row in rows))
    out: Dict[str, object] = {
        "count": int(count),
        "zeros": int(sum(row[8] for row in rows if len(row) > 8)),
        "nan": nan,
        "posinf": posinf,
        "neginf": neginf,
        "min": None,
        "max": None,
        "mean": None,
        "std": None,
    }
    if count == 0:
        return out
    total = sum(row[1] for row in rows)
    mean = total / count
    m2 = 0.0
    for n, s, block_m2, *_ in rows:
        if n > 0:
            gap = s / n - mean  # ``gap * gap``: inf on overflow, where ``** 2`` raises
            m2 += block_m2 + n * (gap * gap)
    out["mean"] = _finite_or_none(mean)
    out["min"] = _finite_or_none(min(row[3] for row in rows if row[0] > 0))
    out["max"] = _finite_or_none(max(row[4] for row in rows if row[0] > 0))
    out["std"] = sample_std(m2, int(count))
    return out


def sample_std(m2: float, count: int) -> Optional[float]:
    """Standard deviation with Bessel's correction, like ``Tensor.std()``; None below 2 values."""
    if count < 2:
        return None
    return _finite_or_none(math.sqrt(max(m2, 0.0) / (count - 1)))


def _finite_or_none(value: float) -> Optional[float]:
    # JSON has no NaN/Inf; the counts already say when those exist.
    return value if math.isfinite(value) else None


def moments_overflowed(out: Dict[str, object]) -> bool:
    """Finite extremes but no mean, or no std, in ``combine``'s totals: the sums or squares
    overflowed the work dtype (float64 beyond ~1e154, complex64 magnitudes beyond ~1e19)."""
    if out["min"] is None or out["max"] is None:
        return False
    return out["mean"] is None or (out["std"] is None and int(out["count"]) >= 2)  # type: ignore[call-overload]


def peak_exponent(out: Dict[str, object]) -> int:
    """``e`` with the largest magnitude below ``2**e``: values times ``2**-e`` lie within [-1, 1]
    (exact, but for values that become subnormal, far below the std's digits)."""
    return math.frexp(max(abs(float(out["min"])), abs(float(out["max"]))))[1]  # type: ignore[arg-type]


def scaled_back(scaled: Dict[str, object], exponent: int, out: Dict[str, object]) -> None:
    """``out``'s mean and std from the totals of the values times ``2**-exponent``. Extremes,
    zeros and NaN/Inf counts stay the unscaled ones: a tiny value scaled down may round to 0."""
    for key in ("mean", "std"):
        value = scaled[key]
        if isinstance(value, float):
            try:
                out[key] = _finite_or_none(math.ldexp(value, exponent))
            except OverflowError:  # a std beyond the largest float: none rather than a wrong one
                out[key] = None


def shifted_back(shifted: Dict[str, object], low: int, out: Dict[str, object]) -> None:
    """``out``'s mean and std from the totals of the values less the integer ``low``."""
    if isinstance(shifted["mean"], float):
        out["mean"] = float(Fraction(low) + Fraction(shifted["mean"]))  # one rounding, not two
    out["std"] = shifted["std"]
