"""Mixed precision: what a ``torch.amp.GradScaler`` does is its job, not an anomaly.

A scaler multiplies the loss by its scale (65536 by default) before ``backward()``, so the
gradients it produces are scaled too; on a step where they overflow float16 it skips the
optimizer step and halves the scale (back-off), and every ``growth_interval`` good steps it
doubles it. The watch sees this through two wraps of the scaler class (behaviour unchanged: the
original runs exactly as called, the wrap only looks at what went in and out):

- ``scale(loss)``: the returned tensor is remembered (weakly) with the unscaled loss (detached:
  no graph is kept), so that the step whose ``backward()`` is called on it judges the unscaled
  loss, and its gradients divided by the scale (read with ``get_scale()`` only when a gradient
  fails the fast check, i.e. after the step's gradients were read anyway);
- ``unscale_(optimizer)``: the gradients are divided in place (the script clips them next);
- ``update()``: closes one scaler step. Gradients with Inf/NaN in a scaled step are the scaler's
  overflow (it skips that step): not reported. What is reported (:class:`ScalerTracker`) is a
  scaler that skips ``MAX_SKIP_RUN`` steps in a row, or whose scale collapsed: an overflow at
  a scale <= ``MIN_SCALE`` means the gradients are not finite even unscaled.

Several ``backward()`` calls before one ``update()`` (accumulation) make one scaler step.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Dict, Optional, Tuple

MAX_SKIP_RUN = 25
MIN_SCALE = 1.0
MAX_REMEMBERED = 8


def scale_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``GradScaler.scale`` that tells the watch which tensor is a scaled loss."""

    def scale(self, outputs, *args, **kwargs):
        result = original(self, outputs, *args, **kwargs)
        watch = current()
        if watch is not None:
            watch.amp.remember(self, outputs, result, watch)
        return result

    scale.__doc__ = original.__doc__
    scale.__wrapped__ = original  # type: ignore[attr-defined]
    return scale


def update_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``GradScaler.update`` that closes one scaler step for the watch."""

    def update(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        watch = current()
        if watch is not None:
            watch.after_scaler_update(self)
        return result

    update.__doc__ = original.__doc__
    update.__wrapped__ = original  # type: ignore[attr-defined]
    return update


def unscale_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``GradScaler.unscale_``: from here on this step's gradients are the true ones."""

    def unscale_(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        watch = current()
        if watch is not None:
            watch.after_unscale()
        return result

    unscale_.__doc__ = original.__doc__
    unscale_.__wrapped__ = original  # type: ignore[attr-defined]
    return unscale_


class _Run:
    __slots__ = ("overflowed", "skipped", "since", "scale_before", "last_scale", "reported", "total")

    def __init__(self) -> None:
        self.overflowed = False  # an overflow since the last update()
        self.skipped = 0  # scaler steps skipped in a row
        self.since = -1  # watch step of the first of them
        self.scale_before: Optional[float] = None  # the scale at the first skip of the run
        self.last_scale: Optional[float] = None  # the scale of the latest overflow
        self.reported = False
        self.total = 0  # skipped steps in all


class ScalerTracker:
    def __init__(self) -> None:
        self._scaled: Dict[int, Tuple["weakref.ref[Any]", Any, "weakref.ref[Any]"]] = {}
        self._runs: Dict[int, Tuple["weakref.ref[Any]", _Run]] = {}

    def remember(self, scaler: Any, outputs: Any, result: Any, watch: Any) -> None:
        try:
            tensor = watch._tensor_type
            if type(result) is not tensor or result is outputs or not isinstance(outputs, tensor):
                return  # disabled scaler (returns its input), or several outputs at once
            if len(self._scaled) >= MAX_REMEMBERED:
                self._scaled.clear()
            self._scaled[id(result)] = (weakref.ref(result), outputs.detach(), weakref.ref(scaler))
        except Exception as exc:
            watch._error(exc)

    def lookup(self, loss: Any) -> Optional[Tuple[Any, Any]]:
        """``(scaler, unscaled loss)`` if ``loss`` is what a scaler's ``scale()`` returned."""
        if not self._scaled:
            return None
        entry = self._scaled.pop(id(loss), None)
        if entry is None or entry[0]() is not loss:
            return None
        scaler = entry[2]()
        return (scaler, entry[1]) if scaler is not None else None

    def overflow(self, scaler: Any, scale: float, step: int) -> None:
        """The gradients of a scaled step hold Inf/NaN: the scaler will skip this step."""
        run = self._run(scaler)
        if not run.overflowed:
            run.overflowed = True
            if run.skipped == 0:
                run.since, run.scale_before = step, scale
        run.last_scale = scale

    def after_update(self, scaler: Any) -> Optional[Dict[str, Any]]:
        """The finding of this scaler step (a long run of skips, a collapsed scale), or None."""
        entry = self._runs.get(id(scaler))
        if entry is None or entry[0]() is not scaler:
            return None
        run = entry[1]
        if not run.overflowed:
            run.skipped, run.reported = 0, False  # a good step ends the run
            return None
        run.overflowed = False
        run.skipped += 1
        run.total += 1
        collapsed = run.last_scale is not None and run.last_scale <= MIN_SCALE
        if run.reported or not (collapsed or run.skipped >= MAX_SKIP_RUN):
            return None
        run.reported = True
        return {
            "skipped": run.skipped,
            "since": run.since,
            "scale_before": run.scale_before,
            "last_scale": run.last_scale,
            "collapsed": collapsed,
            "total_skipped": run.total,
            "max_run": MAX_SKIP_RUN,
            "min_scale": MIN_SCALE,
        }

    def _run(self, scaler: Any) -> _Run:
        entry = self._runs.get(id(scaler))
        if entry is None or entry[0]() is not scaler:
            entry = self._runs[id(scaler)] = (weakref.ref(scaler), _Run())
        return entry[1]


def current_scale(scaler: Any) -> Optional[float]:
    """The scaler's scale as a float (one host read: called only off the fast path)."""
    try:
        value = float(scaler.get_scale())
    except Exception:
        return None
    return value if value > 0 else None
