"""Temporal leakage between table splits ordered by a time column (worker side).

A time column is one whose values are datetimes (``datetime``/``date``, pandas ``Timestamp``,
numpy ``datetime64``) or ISO-8601 text (``2024-03-01``, ``2024-03-01T12:00:00``) in both the
training split and another split. Numbers (epoch seconds, years) are not read as times: nothing
in a number says it is one.

Only splits that **look time-ordered** are judged: at least ``TEMPORAL_ORDERED`` of the other
split's times are later than the training split's median time (a random split of the same period
gives about half, and is never reported: for i.i.d. rows it is a sound split). Then:

- ``temporal-leakage`` (warning) when training rows are later than the start of the other split
  (its ``TEMPORAL_START`` quantile, so one stray early row does not move it): at least
  ``TEMPORAL_MIN_ROWS`` rows and ``TEMPORAL_SHARE`` of the training split. Rows at the boundary
  time itself (a split made in the middle of a day of daily dates) do not count.
- the same kind when the splits are ordered the other way round: at least ``TEMPORAL_ORDERED`` of
  the other split's times are earlier than the training median, and training rows are later than
  its end - the model is evaluated on the past of what it learned from.

Every time column is judged, and nothing is said when any one of them separates the splits
cleanly (ordered, no training row past the boundary): the split was then made on that column, and
another time derived from it (a loan's maturity = its application date + a term) overlaps the
boundary without any leak. Missing times (``None``, NaN, ``NaT``) are left out.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .context import Context, Split


def _missing(v: Any) -> bool:
    """None, NaN, pandas' ``NaT`` (a datetime subclass) or numpy's ``NaT``: not equal to itself."""
    return v is None or (isinstance(v, (float, _dt.datetime, np.generic)) and bool(v != v))


def _seconds(v: Any) -> Optional[float]:
    """A datetime, date, datetime64 or ISO-8601 text as seconds (naive times read as UTC), or None."""
    if _missing(v):
        return None
    if isinstance(v, str):
        text = v.strip()
        if len(text) < 8 or text.count("-") < 2:  # "2024-03-01" at least: not a bare number
            return None
        try:
            v = _dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    if isinstance(v, np.datetime64):
        return None if np.isnat(v) else float(v.astype("datetime64[us]").astype(np.int64)) / 1e6
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        try:
            return v.timestamp()
        except (ValueError, OverflowError, OSError):  # out of the platform's range
            return None
    if isinstance(v, _dt.date):
        return float(v.toordinal() - _dt.date(1970, 1, 1).toordinal()) * 86400.0
    return None


def _times(values: list) -> Optional[tuple]:
    """(row positions, their times in seconds) when nearly all the column's present values are
    times, else None."""
    present = [(i, v) for i, v in enumerate(values) if not _missing(v)]
    if len(present) < T.TEMPORAL_MIN_SPLIT:
        return None
    kinds = {type(v) for _, v in present}
    if any(k in (int, float, bool) or issubclass(k, (np.integer, np.floating)) for k in kinds):
        return None  # numbers (and datetime64[ns] read back as ints) are not read as times
    parsed = [(i, _seconds(v)) for i, v in present]
    found = [(i, t) for i, t in parsed if t is not None]
    if len(found) < T.NUMERIC_SHARE * len(present):
        return None
    return np.asarray([i for i, _ in found]), np.asarray([t for _, t in found], dtype=np.float64)


def check(ctx: Context) -> list:
    out = []
    for train, split in ctx.table_pairs():
        found = _pair(train, split)
        if found is not None:
            out.append(found)
    return out


def _pair(train: Split, split: Split) -> Optional[dict]:
    """The first leaking time column's finding, or None when none leaks or any one of them
    separates the two splits cleanly (the split was made on it)."""
    first = None
    for name in train.table.columns:
        if name not in split.table.columns:
            continue
        a, b = _times(train.table.columns[name]), _times(split.table.columns[name])
        if a is None or b is None:
            continue
        ordered, found = _judge(train, split, name, a, b[1])
        if ordered and found is None:
            return None  # a clean split on this column: a later, derived time is no leak
        first = first or found
    return first


def _judge(train: Split, split: Split, column: str, rows_times: tuple, b: np.ndarray) -> tuple:
    """(whether the splits are ordered in time by this column, the finding when training rows
    reach past the boundary, else None)."""
    rows, a = rows_times
    middle = float(np.median(a))
    if np.mean(b > middle) >= T.TEMPORAL_ORDERED:  # the other split comes after training
        start = float(np.quantile(b, T.TEMPORAL_START))
        late = np.flatnonzero(a > start)
        after, edge = "after the start of", start
    elif np.mean(b < middle) >= T.TEMPORAL_ORDERED:  # ... or before it: training on the future
        end = float(np.quantile(b, 1 - T.TEMPORAL_START))
        late = np.flatnonzero(a > end)
        after, edge = "after the end of", end
    else:
        return False, None  # not time-ordered (a random split): nothing to say
    if len(late) < max(T.TEMPORAL_MIN_ROWS, T.TEMPORAL_SHARE * len(a)):
        return True, None
    when = _dt.datetime.fromtimestamp(round(edge), _dt.timezone.utc).isoformat(sep=" ").replace("+00:00", "")
    return True, F.finding(
        F.TEMPORAL,
        F.WARNING,
        train.name,
        f"{split.name} looks ordered in time against {train.name} by {column!r}, yet {len(late)} of {len(a)} "
        f"{train.name} rows are {after} {split.name} ({when}): the model learns from rows later than those it "
        f"is scored on, so the {split.name} score is optimistic when the rows depend on time (prices, user "
        f"behaviour, sensors). Likely cause: rows split by position in a table not sorted by {column!r}, or a "
        f"random split mixed into a time split. Next step: sort by {column!r} and cut at one time, training on "
        "the earlier rows only.",
        rows[late].tolist(),
        source=train.source,
        column=column,
        boundary=when,
        other=split.name,
    )
