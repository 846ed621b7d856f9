"""Fixed-memory series: the whole curve in buckets (min / max / last), the recent points exact.

A :class:`Bucketed` series holds at most ``max_buckets`` buckets of ``width`` points each and
the last ``recent`` points as they were. When the buckets are full, neighbours merge in pairs
and ``width`` doubles, so a run of a million steps costs the same memory as one of a thousand
and still shows every spike (a bucket's max) and dip (its min). Stdlib only.

JSON (:meth:`Bucketed.to_json`): ``{"count", "width", "buckets": [[first_step, last_step, min,
max, last], ...], "recent": [[step, value], ...]}``; non-finite values are ``null``.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Tuple

MAX_BUCKETS = 512
RECENT = 256


class Bucketed:
    __slots__ = ("max_buckets", "width", "count", "buckets", "recent")

    def __init__(self, max_buckets: int = MAX_BUCKETS, recent: int = RECENT) -> None:
        self.max_buckets = max(2, max_buckets - max_buckets % 2)
        self.width = 1
        self.count = 0
        self.buckets: List[List[Any]] = []  # [first_step, last_step, min, max, last, points]
        self.recent: Deque[Tuple[int, float]] = deque(maxlen=recent)

    def add(self, step: int, value: float) -> None:
        value = float(value)
        self.count += 1
        self.recent.append((step, value))
        last = self.buckets[-1] if self.buckets else None
        if last is not None and last[5] < self.width:
            last[1], last[4], last[5] = step, value, last[5] + 1
            if value < last[2] or last[2] != last[2]:
                last[2] = value
            if value > last[3] or last[3] != last[3]:
                last[3] = value
            return
        self.buckets.append([step, step, value, value, value, 1])
        if len(self.buckets) > self.max_buckets:
            self._merge()

    def _merge(self) -> None:
        merged: List[List[Any]] = []
        for i in range(0, len(self.buckets) - 1, 2):
            a, b = self.buckets[i], self.buckets[i + 1]
            merged.append([a[0], b[1], _lower(a[2], b[2]), _higher(a[3], b[3]), b[4], a[5] + b[5]])
        if len(self.buckets) % 2:
            merged.append(self.buckets[-1])
        self.buckets = merged
        self.width *= 2

    def last(self) -> Optional[float]:
        return self.recent[-1][1] if self.recent else None

    def values(self) -> List[float]:
        """The recent exact values, in step order."""
        return [v for _, v in self.recent]

    def to_json(self) -> Dict[str, Any]:
        return {
            "count": self.count,
            "width": self.width,
            "buckets": [[b[0], b[1], _finite(b[2]), _finite(b[3]), _finite(b[4])] for b in self.buckets],
            "recent": [[s, _finite(v)] for s, v in self.recent],
        }


def _finite(value: float) -> Optional[float]:
    return value if math.isfinite(value) else None


def _lower(a: float, b: float) -> float:
    return b if a != a or b < a else a


def _higher(a: float, b: float) -> float:
    return b if a != a or b > a else a


def points(series: Dict[str, Any]) -> List[Tuple[int, Optional[float]]]:
    """``(step, value)`` for drawing a saved series: each bucket's last, then the recent points."""
    recent = series.get("recent") or []
    first_recent = recent[0][0] if recent else None
    out: List[Tuple[int, Optional[float]]] = []
    for b in series.get("buckets") or []:
        if first_recent is not None and b[1] >= first_recent:
            break
        out.append((b[1], b[4]))
    out.extend((s, v) for s, v in recent)
    return out
