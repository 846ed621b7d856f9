"""A time budget for a data check that runs inside the user's program (worker side).

The CLI's check runs in a worker process with a time limit that kills it. A check run inside a
paused program (``paused.py``) cannot be killed without killing the program, so it gets a budget
instead: the draws stop once it is spent, and the result says how many samples were looked at.

The budget is checked between samples, never inside one: a ``__getitem__`` that never returns
still hangs the program (the CLI, with its time limit, is the way to find such a sample).

A map-style dataset is drawn as an even random subset whatever the budget: before the draw, a few
samples are timed and the subset is made as small as the budget needs (``fit``). Stopping a
draw in index order instead would check the first samples only (a dataset sorted by class would
look imbalanced, a split sorted by date would look drifted: false alarms).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import time
from typing import Iterator, Optional

DRAW_SHARE = 0.5  # of the budget, for the first draw: duplicates may draw every sample again
TIMED = 4  # samples timed before a map-style draw, to size its subset
SAFETY = 0.8  # of the draw's share planned for: sample times vary


class _State:
    def __init__(self) -> None:
        self.seconds: Optional[float] = None
        self.deadline = math.inf
        self.started = 0.0
        self.reached: list = []  # what was cut short, in the notes' words


_state = _State()


def option_error(value: object) -> Optional[str]:
    """Why ``value`` cannot be the ``budgetSeconds`` option, or None: it must be None or a finite
    number of seconds >= 0 (0: no budget). Text such as ``"5"`` is refused, not read: a wrong
    option must be named as one, not end as an error blaming the dataset."""
    if value is None:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        seconds = float(value)
        if math.isfinite(seconds) and seconds >= 0:
            return None
    return (
        f"the option budgetSeconds must be a number of seconds (0 for no time budget), not {value!r}: "
        'pass e.g. {"budgetSeconds": 20}'
    )


@contextlib.contextmanager
def limited(seconds: Optional[float]) -> Iterator[None]:
    """Within: the draws stop ``seconds`` after entry (None or 0: no budget). ValueError for what
    ``option_error`` refuses."""
    problem = option_error(seconds)
    if problem is not None:
        raise ValueError(problem)
    previous = (_state.seconds, _state.deadline, _state.started, _state.reached)
    _state.started = time.perf_counter()
    _state.seconds = float(seconds) if seconds else None
    _state.deadline = _state.started + _state.seconds if _state.seconds is not None else math.inf
    _state.reached = []
    try:
        yield
    finally:
        _state.seconds, _state.deadline, _state.started, _state.reached = previous


def active() -> bool:
    return _state.seconds is not None


def seconds() -> Optional[float]:
    return _state.seconds


def deadline() -> float:
    """``time.perf_counter()`` past which no more samples are drawn (inf: no budget)."""
    return _state.deadline


def spent() -> bool:
    return time.perf_counter() > _state.deadline


def fit(planned: int, per_sample: float) -> int:
    """How many of ``planned`` samples the draw's share of the budget left has room for (>= 1)."""
    if _state.seconds is None or per_sample <= 0:
        return planned
    return max(1, min(planned, int(SAFETY * _draw_left() / per_sample)))


def may_run_out(planned: int, per_sample: float) -> bool:
    """The planned draw would take more than half the draw's share of the budget left."""
    if _state.seconds is None:
        return False
    return planned * per_sample > 0.5 * _draw_left()


def _draw_left() -> float:
    """Seconds left of the first draw's share of the budget (a budget is set)."""
    assert _state.seconds is not None
    return _state.started + _state.seconds * DRAW_SHARE - time.perf_counter()


def cut(what: str) -> None:
    """Record that ``what`` was cut short by the budget (said once in the result's notes)."""
    if what not in _state.reached:
        _state.reached.append(what)


def reached() -> list:
    """What the budget cut short so far, in the order it happened."""
    return list(_state.reached)
