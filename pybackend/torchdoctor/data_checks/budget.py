"""A time budget for a data check that runs inside the user's program (worker side).

The CLI's check runs in a worker process with a time limit that kills it. A check run inside a
paused program (``paused.py``) cannot be killed without killing the program, so it gets a budget
instead: the draws stop once it is spent, and the result says how many samples were looked at.

The budget is checked between samples. A ``__getitem__`` (or a DataLoader's next batch) that never
returns is caught by ``stuck.py``: under a budget each split is drawn in a daemon thread (in the
data-check worker: watched from one), given up on past the split's stop plus ``GRACE`` seconds.

Several splits share the draws' part of the budget fairly (``split``): each gets the time left
divided by the splits left to draw, so what one split does not use flows to the next.

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

from . import watch

DRAW_SHARE = 0.5  # of the budget, for the first draw: duplicates may draw every sample again
TIMED = 4  # samples timed before a map-style draw, to size its subset
SAFETY = 0.8  # of the draw's share planned for: sample times vary
GRACE = 1.0  # seconds past a split's stop before its draw is given up as stuck (stuck.py)


class _State:
    def __init__(self) -> None:
        self.seconds: Optional[float] = None
        self.deadline = math.inf
        self.started = 0.0
        self.reached: list = []  # what was cut short, in the notes' words
        self.stop = math.inf  # the current split's stop (its fair share), else the deadline
        self.draw_end = math.inf  # the current split's end of planning (its share of DRAW_SHARE)
        self.stuck = False  # a draw did not return (stuck.py): no more of the user's code is called


_state = _State()
_threads = [True]  # draw under a budget in threads (stuck.py); off in the data-check worker process


def draw_in_threads(on: bool) -> None:
    """Whether a split is drawn in a thread of its own under a budget (``stuck.py``). The data-check
    worker (CLI, CodeLens) turns it off: a dataset's objects may belong to the thread that made them
    (a sqlite connection, torch's default device and grad mode); there a watchdog thread gives up on
    a split's draw instead (``stuck._watched``), and the process's time limit ends a redraw."""
    _threads[0] = on


def threads() -> bool:
    return _threads[0]


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
    previous = dict(vars(_state))
    _state.started = time.perf_counter()
    _state.seconds = float(seconds) if seconds else None
    _state.deadline = _state.started + _state.seconds if _state.seconds is not None else math.inf
    _state.stop = _state.deadline
    _state.draw_end = _state.started + _state.seconds * DRAW_SHARE if _state.seconds is not None else math.inf
    _state.reached, _state.stuck = [], False
    try:
        yield
    finally:
        vars(_state).update(previous)


@contextlib.contextmanager
def split(left: int) -> Iterator[None]:
    """Within: one split's draw, with ``left`` splits (this one included) still to draw. It gets
    the time left divided by ``left``, for its planning (of the draws' share) and for its stop; a
    split that finishes early leaves the rest to the next. Without a budget: nothing changes."""
    if _state.seconds is None:
        yield
        return
    now, left = time.perf_counter(), max(1, left)
    _state.stop = now + max(0.0, _state.deadline - now) / left
    _state.draw_end = now + max(0.0, _state.started + _state.seconds * DRAW_SHARE - now) / left
    try:
        yield
    finally:
        _state.stop = _state.deadline
        _state.draw_end = _state.started + _state.seconds * DRAW_SHARE


def active() -> bool:
    return _state.seconds is not None


def started() -> float:
    """``time.perf_counter()`` when the budget began."""
    return _state.started


def seconds() -> Optional[float]:
    return _state.seconds


def deadline() -> float:
    """``time.perf_counter()`` past which no more samples are drawn (inf: no budget): the current
    split's stop while one is drawn (``split``), else the budget's end."""
    return _state.stop


def spent() -> bool:
    return _state.stuck or time.perf_counter() > _state.stop


def mark_stuck() -> None:
    """A draw did not return (``stuck.py``): from now on the budget counts as spent, so no more of
    the user's code is called (it may wait on what the stuck call holds)."""
    _state.stuck = True


def stuck() -> bool:
    return _state.stuck


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
    """Seconds left of the current split's share of the draws' part of the budget (a budget is set)."""
    assert _state.seconds is not None
    return _state.draw_end - time.perf_counter()


def cut(what: str) -> None:
    """Record that ``what`` was cut short by the budget (said once in the result's notes); not from
    a draw thread given up on (stuck.py): it would write into a later check's notes."""
    if watch.abandoned_here():
        return
    if what not in _state.reached:
        _state.reached.append(what)


def reached() -> list:
    """What the budget cut short so far, in the order it happened."""
    return list(_state.reached)
