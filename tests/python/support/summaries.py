"""Shared helper for the summary tests: every summary computed from scratch."""

from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def cold_summaries() -> Iterator[None]:
    """No measured rate, no cached value, model line or array line on the way in; no rate on the way out."""
    from torchdoctor.runtime.stats import budget
    from torchdoctor.runtime.stats.cache import VALUE_STATS
    from torchdoctor.runtime.summary import aggregates

    budget.forget_rates()
    for cache in (VALUE_STATS, aggregates.MODULE_LINES, aggregates.ARRAYS):
        cache.clear()
    try:
        yield
    finally:
        budget.forget_rates()
