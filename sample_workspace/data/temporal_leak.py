"""Temporal leakage: a sales table split by position before it was sorted by time.

The rows were meant to be split in time (train on January-October, test on November-December),
but the export appended a late batch of November-December rows at the *start* of the table,
so splitting by position put 60 of the test period's rows into training. The model sees the
future it is scored on.

Try it::

    torchdoctor check data data/temporal_leak.py

Torch Doctor reads the ``timestamp`` column of both splits: the test split comes after the
training split (nearly all its times are past the training median), yet 60 training rows are
later than the start of the test period. Fix: sort by ``timestamp`` and cut at one time.
A random split of the same rows (shuffle, then cut) is not reported: for independent rows it
is a sound split.
"""

import datetime as dt
import random


def _rows(days, rng):
    start = dt.datetime(2024, 1, 1)
    return [
        {"timestamp": start + dt.timedelta(days=d), "units": float(rng.randint(0, 40)), "price": 10 + rng.random()}
        for d in days
    ]


def torchdoctor_data():
    rng = random.Random(0)
    in_order = [d * 305 / 1000 for d in range(1000)]  # January to October
    late = sorted(305 + rng.random() * 60 for _ in range(260))  # November and December
    table = _rows(late[100:160], rng) + _rows(in_order, rng) + _rows(late[:100] + late[160:], rng)
    return {"train": table[:1060], "test": table[1060:]}
