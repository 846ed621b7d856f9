"""Combine per-block partial statistics into exact totals (Chan et al.'s parallel variance).

Each block reports ``(n, sum, m2, min, max, nan, posinf, neginf[, zeros])`` over its finite
values, where ``m2`` is the sum of squared deviations from the block's own mean and ``zeros``
counts its values equal to 0 (optional: rows without it count none). Combining centred sums keeps
full precision even when the mean dwarfs the spread (``x = 1000 + noise``), which the one-pass
``E[x²] - E[x]²`` formula does not. Pure Python floats: it runs after the device work is done.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, Optional, Sequence

Row = Sequence[float]


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
            m2 += block_m2 + n * (s / n - mean) ** 2
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
