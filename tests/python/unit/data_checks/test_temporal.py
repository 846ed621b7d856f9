"""Temporal leakage between table splits ordered by a time column: reported when training rows
are later than the start of a split that otherwise comes after it (or the splits are ordered the
other way round); silent on random splits, clean time splits and a split inside one day."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np

from support.data_checks import check, kinds

START = dt.datetime(2024, 1, 1)


def rows(days, seed=0):
    """A table of one row per entry of ``days`` (days after 2024-01-01, fractions are hours)."""
    rng = random.Random(seed)
    return {
        "timestamp": [START + dt.timedelta(days=d) for d in days],
        "price": [100.0 + d + rng.random() for d in days],
        "volume": [float(rng.randint(1, 50)) for _ in days],
    }


def test_training_rows_after_the_start_of_the_test_period_are_reported():
    rng = random.Random(1)
    late = [300 + rng.random() * 60 for _ in range(200)]  # the last two months
    leaked, held_out = late[:40], late[40:]  # 40 of them went to training by mistake
    r = check({"train": rows([d * 300 / 800 for d in range(800)] + leaked), "test": rows(held_out)})
    assert kinds(r) == ["temporal-leakage"]
    f = r["findings"][0]
    assert f["split"] == "train" and f["details"]["column"] == "timestamp" and f["details"]["other"] == "test"
    assert set(f["indices"]) <= set(range(800, 840)) and 30 <= f["count"] <= 40
    assert "'timestamp'" in f["message"] and "optimistic" in f["message"]


def test_a_random_split_of_the_same_period_is_silent():
    days = [d * 360 / 1000 for d in range(1000)]
    random.Random(2).shuffle(days)
    r = check({"train": rows(days[:800]), "test": rows(days[800:])})
    assert r["findings"] == []


def test_a_clean_time_split_is_silent_even_when_the_boundary_day_is_on_both_sides():
    train = rows([d / 4 for d in range(1200)])  # 300 days, four rows a day
    test = rows([299 + d / 4 for d in range(200)])  # starts on train's last day (at its last time)
    r = check({"train": train, "test": test})
    assert r["findings"] == []
    daily = {
        "timestamp": [dt.date(2024, 1, 1) + dt.timedelta(days=d // 4) for d in range(400)],
        "x": [d % 3.0 for d in range(400)],
    }
    later = {
        "timestamp": [dt.date(2024, 4, 9) + dt.timedelta(days=d // 4) for d in range(100)],
        "x": [d % 2.0 for d in range(100)],
    }
    assert check({"train": daily, "test": later})["findings"] == []  # dates: day 99 on both sides


def test_iso_text_times_and_a_split_ordered_the_other_way_round():
    day = [(START + dt.timedelta(days=d)).date().isoformat() for d in range(300)]
    train = {"date": day[100:300], "x": [float(d % 7) for d in range(200)]}
    test = {"date": day[:60], "x": [float(d % 5) for d in range(60)]}
    r = check({"train": train, "test": test})
    assert kinds(r) == ["temporal-leakage"] and "after the end of test" in r["findings"][0]["message"]


def test_numbers_are_not_read_as_times_and_datetime64_is():
    years = {"year": [2000 + d // 50 for d in range(500)], "x": [float(d % 7) for d in range(500)]}
    later = {"year": [2005 + d // 50 for d in range(100)], "x": [float(d % 5) for d in range(100)]}
    years["year"][:20] = [2009] * 20  # "late" training rows, but a year is a number
    assert check({"train": years, "test": later})["findings"] == []
    base = np.datetime64("2024-01-01T00:00:00", "s")
    train = np.array(
        [(base + np.timedelta64(h, "h"), float(h % 7)) for h in list(range(500)) + list(range(560, 580))],
        dtype=[("ts", "M8[s]"), ("x", "f8")],
    )
    test = np.array(
        [(base + np.timedelta64(500 + h, "h"), h % 5.0) for h in range(100)], dtype=[("ts", "M8[s]"), ("x", "f8")]
    )
    assert kinds(check({"train": train, "test": test})) == ["temporal-leakage"]


def test_too_few_rows_say_nothing():
    r = check({"train": rows([float(d) for d in range(15)] + [40.0] * 3), "test": rows([30.0 + d for d in range(10)])})
    assert r["findings"] == []
