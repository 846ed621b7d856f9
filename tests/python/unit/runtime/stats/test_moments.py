"""runtime/stats/moments.py: combining block partials gives exact totals."""

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchdoctor.runtime.stats.moments import combine, repeat


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
        assert out["std"] == pytest.approx(statistics.stdev(everything), rel=1e-6, abs=1e-6)
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
