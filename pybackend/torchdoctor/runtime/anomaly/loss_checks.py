"""The watch's loss checks and its after-``backward()`` work: loss rules, deferred device checks.

A mixin of :class:`watch.Watch` (it uses the watch's state: ``config``, ``names``, ``step``,
``amp``, ``losses``, ``pending``...), kept apart so that each file stays readable. Before the real
backward the step's loss is judged (:mod:`loss_health`, one series per ``backward()`` call site);
after it the step's deferred device checks and fresh gradients are read in one transfer and
handed to :class:`grad_checks.GradientChecks`.
"""

from __future__ import annotations

import os
import sys
import weakref
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from . import report as R
from .amp import ScalerTracker
from .dead import DeadEvidence
from .detect import NONFINITE, ZERO, checkable, extremes_device, grad_bounds, verdict
from .device import DeviceBatch
from .frames import user_frame
from .grads import zero_grads
from .host import WatchHost
from .loss_forensics import describe, find_origin
from .loss_health import TREND_RULES, LossSeries
from .stale import StaleGradTracker

_LOSS_KINDS = {
    "nan": "loss_nan",
    "spike": "loss_spike",
    "notDecreasing": "loss_not_decreasing",
    "oscillating": "loss_oscillating",
}


class LossChecks(WatchHost):
    # The watch's state and methods this mixin uses (declared for the type checker; the values
    # are :class:`watch.Watch`'s).
    updates: int
    amp: ScalerTracker
    stale: StaleGradTracker
    losses: LossSeries
    dead: DeadEvidence
    pending: DeviceBatch
    force_deferred: bool
    check_backward: bool
    check_loss: bool
    _amp_step: Any
    _last_loss: Optional[float]
    _last_grads: Any
    _bad_output_step: int
    _grad_seen: Dict[int, Any]
    _tensor_type: Any
    _strided: Any
    _grad_dtypes: Any
    _last_out: Optional["weakref.ref[Any]"]
    _last_version: int
    _last_extremes: Tuple[float, float]

    if TYPE_CHECKING:

        def _deferred(self, t: Any) -> bool: ...

        def _refresh_flags(self) -> None: ...

        def _dead_after_backward(self, frame: Any) -> None: ...

        def _grads_hit(self, grads: Any, table: Any, frame: Any, loss: Any = None) -> None: ...

    def before_backward(self, loss: Any, frame) -> None:
        try:
            # A GradScaler's scale(loss): judge the unscaled loss, and the gradients unscaled.
            self._amp_step = self.amp.lookup(loss) if self.amp._scaled else None
            if self.check_backward:
                self.stale.before_backward()
            if self.check_loss and is_scalar(loss) and not self._deferred(loss):
                self._loss_hit(self._loss_value(loss), loss, frame)
        except Exception as exc:
            self._error(exc)

    def _loss_value(self, loss: Any) -> float:
        """The loss as a float: the unscaled one under a GradScaler; the forward check's own read
        when the loss is the output just checked (a loss module's), unchanged since."""
        if self._amp_step:
            return float(self._amp_step[1].item())
        last = self._last_out() if self._last_out is not None else None
        if last is not None and last is loss and last._version == self._last_version:
            low, high = self._last_extremes
            if low == high:  # one value: its exact extremes are the value (NaN is read again)
                return low
        return float(loss.detach().item())

    def after_backward(self, loss: Any, frame) -> None:
        try:
            self._flush_deferred(loss, frame)
            if self.dead.pending:
                self._dead_after_backward(frame)
        except Exception as exc:
            self._error(exc)
        self._amp_step = None
        self.step += 1
        self._refresh_flags()

    def _loss_hit(self, value: float, loss: Any, frame) -> None:
        self._last_loss = value
        # One series per backward() call site (the caller's line and the line that called it):
        # a GAN's discriminator and generator losses are different curves.
        site = (
            frame.f_code,
            frame.f_lineno,
            frame.f_back.f_code if frame.f_back else None,
            frame.f_back.f_lineno if frame.f_back else 0,
        )
        health = self.losses.by_site.get(site) or self.losses.get(site, _site_label(frame))
        for finding in health.observe(value, self.updates):
            rule = str(finding["rule"])
            advice = rule in TREND_RULES  # trends are advice: never a stop, never the exit status
            action = self.config.action(rule)
            if not self._may_report(action, advice=advice):
                continue
            frame = user_frame(frame)
            report = R.base(_LOSS_KINDS[rule], "loss", self.step, frame, action)
            report.update({k: v for k, v in finding.items() if k != "rule"})
            report["loss"] = value
            report["advice"] = advice
            report["loss_site"], report["loss_series"] = self.losses.labels.get(site), len(self.losses)
            if self._amp_step is not None:
                report["unscaled"] = True
            if rule == "nan":
                self._explain_nan(report, loss)
            if rule == "notDecreasing" and self._last_grads:
                paths, table = self._last_grads
                report["zero_grad_params"] = zero_grads(paths, table)
                report["params_with_grad"] = len(paths)
            self._emit(report, frame)

    def _explain_nan(self, report: Dict[str, Any], loss: Any) -> None:
        from ...spelling import fmt_num

        report["loss_text"] = fmt_num(report["loss"])
        report["modules_clean"] = self.config.watches("forward") and self._bad_output_step != self.step
        if loss is not None and getattr(loss, "grad_fn", None) is not None:
            origin = find_origin(loss)
            report["origin_op"] = origin
            report["origin"] = describe(origin)

    def _flush_deferred(self, loss: Any, frame) -> None:
        """The step's device checks (accelerators) and its gradients, read in one transfer."""
        grads = self._fresh_grads() if (self.check_backward and loss is not None) else []
        deferred_loss = loss is not None and self.check_loss and is_scalar(loss) and self._deferred(loss)
        if not len(self.pending) and not deferred_loss and not self.force_deferred and all(e[3].is_cpu for e in grads):
            if grads:  # the CPU: read each gradient's extremes directly, nothing to batch
                self._grads_hit(grads, grad_bounds([e[3] for e in grads]), frame, loss)
            return
        batch, self.pending = self.pending, DeviceBatch()
        if deferred_loss:
            batch.add(("loss",), (self._amp_step[1] if self._amp_step else loss.detach()).reshape(1).float())
        for entry in grads:
            batch.add(("grad",), extremes_device(entry[3]).float())
        if not len(batch):
            return
        rows = batch.flush()
        forward = [(tag[1], values) for tag, values in rows if tag[0] == "forward"]
        self._deferred_forward(forward, frame)
        if deferred_loss:
            self._loss_hit([v for tag, v in rows if tag[0] == "loss"][0][0], None, frame)
        if grads:
            table = [(v[0], v[1]) for tag, v in rows if tag[0] == "grad"]
            self._grads_hit(grads, table, frame, loss)

    def _fresh_grads(self):
        """Gradients this backward wrote: another model's old ``.grad`` is not this step's news.

        A gradient is the same if it is the same tensor (weak reference) at the same version;
        backward either accumulates in place (new version) or creates a new tensor.
        """
        fresh = []
        seen = self._grad_seen
        tensor, strided, floats = self._tensor_type, self._strided, self._grad_dtypes
        for path, p, module in self.names.parameters():
            grad = p.grad
            if grad is None:
                continue
            known = seen.get(id(p))
            version = grad._version
            if known is not None and known[0]() is grad and known[1] == version:
                continue
            # checkable(grad), inlined: a dense floating gradient with values (sparse ones are not read)
            if (
                grad.dtype in floats
                and type(grad) is tensor
                and grad.layout is strided
                and grad.numel()
                and not grad.is_meta
            ) or (grad.dtype not in floats and checkable(grad)):
                seen[id(p)] = (weakref.ref(grad), version)
                fresh.append((path, p, module, grad))
        return fresh

    def _deferred_forward(self, forward, frame) -> None:
        for module_ref, (low, high) in forward:
            module = module_ref()
            kind = verdict(low, high, self.config.threshold)
            if module is None or kind is None or kind == ZERO:
                continue  # the dead-output rule needs the inputs: CPU only
            if kind == NONFINITE:
                self._bad_output_step = self.step
            if not self._may_report(self.config.mode):
                return
            frame = user_frame(frame)
            report = R.base(
                "nonfinite_output" if kind == NONFINITE else "exploding_output",
                "forward",
                self.step,
                frame,
                self.config.mode,
            )
            report.update(R.module_facts(self.names, module, frame))
            report.update(
                {
                    "max_abs": max(-low, high) if low == low and high == high else float("nan"),
                    "min": low,
                    "max": high,
                    "threshold": self.config.threshold,
                    "exact": False,
                    "counts": None,
                    "inputs_counts": None,
                }
            )
            self._emit(report, frame, about=module)
            return


def _site_label(frame) -> str:
    """``train.py:42``: the backward() line of a loss series."""
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def is_scalar(t: Any) -> bool:
    """A one-element floating tensor: what a loss is."""
    torch = sys.modules["torch"]
    return isinstance(t, torch.Tensor) and t.numel() == 1 and t.dtype.is_floating_point
