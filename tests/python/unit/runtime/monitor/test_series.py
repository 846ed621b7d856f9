"""Bucketed series: fixed memory over a million steps, the curve's extremes kept."""

from __future__ import annotations

import json
import math
import tracemalloc

from torchdoctor.runtime.monitor.series import Bucketed, points


def test_one_million_steps_stay_bounded():
    series = Bucketed()
    tracemalloc.start()
    try:
        for step in range(1, 100_001):
            series.add(step, math.sin(step / 1000.0))
        at_100k = tracemalloc.get_traced_memory()[0]
        for step in range(100_001, 1_000_001):
            series.add(step, math.sin(step / 1000.0))
        at_1m = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert series.count == 1_000_000
    assert len(series.buckets) <= 512 and len(series.recent) == 256
    assert at_1m < at_100k * 1.5 + 64 * 1024, (at_100k, at_1m)  # bounded: no growth with the run
    saved = series.to_json()
    assert saved["buckets"][0][0] == 1 and saved["buckets"][-1][1] == 1_000_000
    assert len(json.dumps(saved)) < 100_000


def test_spike_and_dip_survive_merging():
    series = Bucketed(max_buckets=16, recent=4)
    for step in range(1, 10_001):
        value = 100.0 if step == 4321 else (-5.0 if step == 777 else 1.0)
        series.add(step, value)
    buckets = series.to_json()["buckets"]
    assert max(b[3] for b in buckets) == 100.0 and min(b[2] for b in buckets) == -5.0
    holding = [b for b in buckets if b[3] == 100.0][0]
    assert holding[0] <= 4321 <= holding[1]
    # contiguous, in order, every step in exactly one bucket
    assert all(a[1] + 1 == b[0] for a, b in zip(buckets, buckets[1:]))
    assert series.width * 16 >= 10_000


def test_recent_points_are_exact_and_nan_is_null():
    series = Bucketed(max_buckets=8, recent=3)
    for step, value in enumerate([1.0, 2.0, float("nan"), 4.0, 5.0], start=1):
        series.add(step, value)
    saved = series.to_json()
    assert saved["recent"] == [[3, None], [4, 4.0], [5, 5.0]]
    assert all(b[2] is not None for b in saved["buckets"][:2])
    drawn = points(saved)
    assert [s for s, _ in drawn] == [1, 2, 3, 4, 5]
