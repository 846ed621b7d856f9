"""Temporal leakage between table splits ordered by a time column: reported when training rows
are later than the start of a split that otherwise comes after it (or the splits are ordered the
other way round); silent on random splits, clean time splits and a split inside one day."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pytest

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


def leaky_days(n=1000, moved=60):
    """Days of a year in order, with ``moved`` rows from near the end placed before the cut at
    80 %: a time split made by position in a table not sorted by time."""
    days = [d * 360 / n for d in range(n)]
    cut = int(0.8 * n)
    late = days[cut + 50 : cut + 50 + moved]
    rest = days[: cut + 50] + days[cut + 50 + moved :]
    ordered = late + rest
    return ordered[:cut], ordered[cut:]


def test_pandas_missing_times_are_skipped_and_the_leak_still_found():
    pd = pytest.importorskip("pandas")
    train_days, test_days = leaky_days()
    train = pd.DataFrame(
        {"when": [START + dt.timedelta(days=d) for d in train_days], "x": np.arange(len(train_days)) % 7.0}
    )
    test = pd.DataFrame(
        {"when": [START + dt.timedelta(days=d) for d in test_days], "x": np.arange(len(test_days)) % 5.0}
    )
    train.loc[3, "when"] = pd.NaT
    train.loc[500, "when"] = None
    test.loc[10, "when"] = pd.NaT
    r = check({"train": train, "test": test})
    leaks = [f for f in r["findings"] if f["kind"] == "temporal-leakage"]
    assert len(leaks) == 1 and leaks[0]["details"]["column"] == "when"
    assert not any("could not run" in n for n in r["notes"])


def test_none_among_times_is_skipped_and_the_leak_still_found():
    train_days, test_days = leaky_days()
    train, test = rows(train_days), rows(test_days)
    train["timestamp"][3] = None
    test["timestamp"][7] = None
    assert "temporal-leakage" in kinds(check({"train": train, "test": test}))


def test_a_clean_split_on_one_time_column_is_silent_despite_a_time_derived_from_it():
    rng = random.Random(4)
    applied = [START + dt.timedelta(days=d * 360 / 1200) for d in range(1200)]
    maturity = [t + dt.timedelta(days=rng.randint(30, 365)) for t in applied]  # overlaps the cut
    amount = [rng.random() for _ in applied]

    def table(lo, hi, first):
        cols = {"application": applied[lo:hi], "maturity": maturity[lo:hi], "amount": amount[lo:hi]}
        return cols if first else {k: cols[k] for k in ("maturity", "application", "amount")}

    for first in (True, False):  # whichever column comes first
        assert check({"train": table(0, 1000, first), "test": table(1000, 1200, first)})["findings"] == []
    # split by position of a table unsorted by application: both columns leak, and it is said
    order = list(range(1100, 1160)) + list(range(1100)) + list(range(1160, 1200))
    shuffled = {"application": [applied[i] for i in order], "maturity": [maturity[i] for i in order]}
    train = {k: v[:1000] for k, v in shuffled.items()}
    test = {k: v[1000:] for k, v in shuffled.items()}
    assert kinds(check({"train": train, "test": test})) == ["temporal-leakage"]
