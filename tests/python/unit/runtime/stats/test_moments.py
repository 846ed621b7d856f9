"""runtime/stats/moments.py: combining block partials gives exact totals."""

import math
import statistics
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchdoctor.runtime.stats.moments import combine, repeat


def _exact_std(values):
    """The sample standard deviation from exact fractions: ``statistics.stdev`` of Python 3.9
    fails its own assertion on subnormal values (a negative sum of squares), so it is no oracle."""
    exact = [Fraction(v) for v in values]
    mean = sum(exact) / len(exact)
    return math.sqrt(sum((v - mean) ** 2 for v in exact) / (len(exact) - 1))


@settings(max_examples=60)
@given(data=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40), cut=st.integers(1, 10), k=st.integers(1, 4))
def test_combine_matches_statistics(data, cut, k):
    rows = []
    for i in range(0, len(data), cut):
        chunk = data[i : i + cut]
        m = sum(chunk) / len(chunk)
        rows.append(
            repeat((len(chunk), sum(chunk), sum((v - m) ** 2 for v in chunk), min(chunk), max(chunk), 0, 0, 0), k)
        )
    out = combine(rows)
    everything = data * k
    assert out["count"] == len(everything) and out["min"] == min(data) and out["max"] == max(data)
    assert out["mean"] == pytest.approx(statistics.fmean(everything), rel=1e-9, abs=1e-6)
    if len(everything) > 1:
        assert out["std"] == pytest.approx(_exact_std(everything), rel=1e-6, abs=1e-6)
    else:
        assert out["std"] is None


def test_combine_of_nothing_finite():
    out = combine([(0, 0.0, 0.0, math.inf, -math.inf, 3, 1, 0)])
    assert out == {
        "count": 0,
        "zeros": 0,
        "nan": 3,
        "posinf": 1,
        "neginf": 0,
        "min": None,
        "max": None,
        "mean": None,
        "std": None,
    }
