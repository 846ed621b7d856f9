"""The watch's gradient checks: after ``backward()``, after the script's clipping, at the scaler's update.

A mixin of :class:`watch.Watch` (it uses the watch's state: ``config``, ``names``, ``step``,
``amp``, ``clips``...), kept apart so that each file stays readable. After ``backward()`` every
fresh gradient's extremes are compared with the threshold (the usual case ends there); then:

- a GradScaler's scaled step (:mod:`amp`): Inf/NaN is the scaler's overflow (it skips the step),
  not an anomaly; otherwise the extremes are divided by the scale before they are judged;
- an explosion when the script clips (:mod:`clipping`) is held back and judged again right
  after its clipping call (or at the optimizer step, if no clipping came);
- anything else is reported at once (:mod:`grads` names the parameter nearest the loss).
"""

from __future__ import annotations

import math
import sys
from operator import itemgetter
from typing import Any, Dict, List, Optional

from . import report as R
from .amp import ScalerTracker, current_scale
from .clipping import ClipHints
from .data_origin import nonfinite_data
from .detect import EXPLOSION, NONFINITE, checkable
from .frames import user_frame
from .grads import extremes_of, judge, loss_order, unscaled
from .host import WatchHost
from .loss_health import LossSeries
from .vanished import VanishedRule, VanishedStreak

_PATH = itemgetter(0)  # of a (path, parameter, module, grad) entry
LARGE_UNITS_START = 5  # the first losses of a series: where a loss in large units started
_SCALE_FREE = ("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "SparseAdam", "RMSprop", "Adagrad", "Adadelta")


class GradientChecks(VanishedRule, WatchHost):
    # The watch's state and methods this mixin uses (declared for the type checker; the values
    # are :class:`watch.Watch`'s).
    amp: ScalerTracker
    clips: ClipHints
    losses: LossSeries
    vanished: VanishedStreak
    check_backward: bool
    _amp_step: Any
    _last_loss: Optional[float]
    _last_grads: Any
    _pending_explosion: Optional[int]
    _pending_scale: Optional[float]
    _pending_order: Optional[List[int]]
    _unscaled_step: int
    _bad_output_step: int

    def _grad_norms_hit(self, grads, norms: List[float], frame, loss: Any = None) -> None:
        """The CPU's usual case: each gradient's 2-norm (:func:`detect.grad_norms`) bounds its values."""
        # every norm finite (a NaN or Inf makes the sum so), within the threshold, none zero
        if sum(norms) < math.inf and max(norms) <= self.config.threshold and min(norms) > 0.0:
            self._last_grads = (list(map(_PATH, grads)), norms)  # norms: loss_checks makes them bounds
            self.vanished.clear()  # a gradient not zero: no vanished streak (vanished.py)
            return
        self._grads_hit(grads, [(-n, n) for n in norms], frame, loss)

    def _grads_hit(self, grads, table, frame, loss: Any = None) -> None:
        # Names and extremes only: keeping the gradients would hold them past zero_grad().
        threshold = self.config.threshold
        if _within(table, threshold) and all(high > 0.0 for _, high in table):
            # the usual case, fast: every bound finite, within the threshold, no gradient all zero
            self._last_grads = ([e[0] for e in grads], table)
            self.vanished.clear()
            return
        table = extremes_of([e[3] for e in grads])  # exact now (the bounds were not enough)
        self._last_grads = ([e[0] for e in grads], table)
        if _within(table, threshold):
            self._vanished_check(grads, table, frame, loss)  # every gradient exactly 0, steps in a row?
            return
        self.vanished.clear()
        scale = None
        if self._amp_step is not None:  # a GradScaler's scaled gradients
            scale = current_scale(self._amp_step[0])
            if not all(math.isfinite(low) and math.isfinite(high) for low, high in table):
                if scale is not None:
                    self.amp.overflow(self._amp_step[0], scale, self.step)  # the scaler skips this step
                return
            if scale is not None:
                table = unscaled(table, scale)
                if _within(table, threshold):
                    return
        order = loss_order(loss, [e[1] for e in grads])
        found = judge(grads, table, threshold, order)
        if found is None or not self._may_report(self.config.mode, nonfinite=found["kind"] == NONFINITE):
            return
        if found["kind"] == EXPLOSION and self._loss_in_large_units(found["largest_max_abs"], grads):
            return
        if found["kind"] == EXPLOSION and self.clips.expected(frame):
            self._pending_explosion, self._pending_scale = self.step, scale  # judged after the script's clipping
            self._pending_order = order
            return
        self._grads_report(grads, table, found, frame, {"grad_scale": scale})

    def _loss_in_large_units(self, largest: float, grads: Any) -> bool:
        """The loss started in large units and has not risen, and the optimizers do not scale their
        steps with the gradients: a regression's mean squared error in dollars starts at 4e10 and
        its gradients reach 1e6 while Adam trains it (2026-12-07). They pass when below the largest
        of the series' first losses and the loss is not above it either. Plain SGD's step is the
        gradient times the learning rate (the same gradients diverge there), a learning rate too
        high sends the loss above where it started, and a gradient past every loss the series began
        with is not explained by its units: each is judged as before. Asked after a hit only."""
        loss = self._last_loss
        if loss is None or not _scale_free(self.optimizers.live(), {id(e[1]) for e in grads}):
            return False
        for health in self.losses.by_site.values():  # the series whose last loss is this step's
            if health.recent and health.recent[-1] == loss and health.first:
                start = max(health.first[:LARGE_UNITS_START])
                return loss <= start and largest <= start
        return False

    def _grads_report(self, grads, table, found, frame, extra: Dict[str, Any]) -> None:
        step = extra.pop("step", self.step)
        path, _, module, grad = grads[found["index"]]
        kind = "nonfinite_grad" if found["kind"] == NONFINITE else "exploding_grad"
        frame = user_frame(frame)
        report = R.base(kind, "backward", step, frame, self.config.mode)
        report.update(R.module_facts(self.names, module, frame))
        report["module_qualname"] = report["qualname"]
        report["param"] = self._qualify(path, module, frame)
        report.update(R.tensor_facts(grad))
        largest, nearest = grads[found["largest_index"]], grads[found["nearest_index"]]
        report["largest"] = [self._qualify(largest[0], largest[2], frame), found["largest_max_abs"]]
        report["nearest"] = self._qualify(nearest[0], nearest[2], frame)
        report["largest_farther"] = found["largest_farther"]
        report.update(
            {k: v for k, v in found.items() if k in ("bad_params", "max_abs", "nearest_max_abs", "farthest_max_abs")}
        )
        report["threshold"] = self.config.threshold
        report["loss"] = self._last_loss
        if kind == "nonfinite_grad" and self._bad_output_step != step:  # no module output was bad first
            report["data_bad"] = nonfinite_data(frame)
        report.update({k: v for k, v in extra.items() if v is not None})
        self._emit(report, frame, step=step, about=grads[found["index"]][1])

    # -- the script's clipping, and its GradScaler ------------------------------------------------

    def after_clip(self, name: str) -> None:
        """A clipping function has run: an explosion held back is judged on the clipped gradients."""
        try:
            self.clips.seen = True
            self._judge_pending({"clipped_by": name, "clipping": True})
        except Exception as exc:
            self._error(exc)

    def after_unscale(self) -> None:
        self._unscaled_step = max(self.step - 1, 0)

    def _judge_pending(self, extra: Dict[str, Any]) -> None:
        step, self._pending_explosion = self._pending_explosion, None
        if step is None or not self.check_backward or not self._may_report(self.config.mode, step=step):
            return
        grads = [
            (path, p, module, p.grad)
            for path, p, module in self.names.parameters()
            if p.grad is not None and checkable(p.grad)
        ]
        table = extremes_of([e[3] for e in grads])
        if self._pending_scale is not None and self._unscaled_step != step:
            table = unscaled(table, self._pending_scale)  # clipped while still scaled
        order, self._pending_order = self._pending_order, None
        if order is not None and len(order) != len(grads):
            order = None
        found = judge(grads, table, self.config.threshold, order) if grads else None
        if found is not None:
            frame = user_frame()
            extra.update(step=step, clipping=True)
            self._grads_report(grads, table, found, frame, extra)

    def after_scaler_update(self, scaler: Any) -> None:
        try:
            finding = self.amp.after_update(scaler)
            step = max(self.step - 1, 0)
            if (
                finding is None
                or not self.config.watches("backward")
                or not self._may_report(self.config.mode, step=step)
            ):
                return
            frame = user_frame()
            report = R.base("scaler_skips", "optimizer", step, frame, self.config.mode)
            report.update(finding)
            report["scaler"] = R.root_label(scaler, frame)["root_var"] or "scaler"
            report["scale_now"] = current_scale(scaler)
            self._emit(report, frame, step=step, count=False)
        except Exception as exc:
            self._error(exc)


def _scale_free(optimizers: List[Any], wanted: set) -> bool:
    """Every optimizer holding these parameters divides its step by a running gradient scale
    (Adam and its family, RMSprop, Adagrad, Adadelta), and there is at least one."""
    torch = sys.modules["torch"]
    kinds = tuple(getattr(torch.optim, n) for n in _SCALE_FREE if hasattr(torch.optim, n))
    owners = [o for o in optimizers if any(id(p) in wanted for g in o.param_groups for p in g["params"])]
    return bool(owners) and all(isinstance(o, kinds) for o in owners)


def _within(table, threshold: float) -> bool:
    for low, high in table:
        if not (low >= -threshold and high <= threshold):  # NaN fails both comparisons
            return False
    return True
