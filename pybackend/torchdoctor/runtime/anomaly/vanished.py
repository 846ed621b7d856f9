"""Every gradient exactly 0, several training steps in a row, while the loss is not 0: nothing learns.

A single zero gradient is common (a dead unit, a clamped temperature, an unused row of an
embedding) and says nothing; a layer whose output is all zero has its own rule (:mod:`dead`). What
this rule sees is the whole model stuck: in every ``backward()`` of ``deadSteps`` optimizer
steps in a row, each parameter that got a gradient got exactly 0 everywhere, and the loss was not
0. Nothing can learn then, whatever the optimizer does (Adam's momentum still moves the weights,
blindly). The usual causes: tanh/sigmoid units saturated at exactly ±1 in float32 (weights made
huge by a learning rate too high: PyTorchZeroToAll's hello-RNN with the rate planted x1e6 had every
gradient 0 and a flat loss of 11.1 from its second epoch on, and the watch only gave advice), ReLUs dead
everywhere, or a non-differentiable op (``argmax``, ``round``, a comparison) between the
parameters and the loss.

What stays silent: a loss of exactly 0 (a hinge or margin loss at its floor, a policy loss whose
advantages are all 0: a perfect fit has zero gradients), parameters without a gradient (frozen,
unused, sparse), and any step where one gradient is not zero (a GAN's discriminator saturated
while its generator learns). The streak counts ``backward()`` calls and optimizer steps together,
so a loop with several backward calls a step (a GAN, gradient accumulation) needs as many steps.
The usual case costs the hot path one method call: the streak is cleared when the fast check
already proves every gradient non-zero.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

from . import report as R
from .grads import extremes_of
from .host import WatchHost

# A weight this large saturates tanh (exactly 1.0 in float32 from 9.0) and sigmoid from any input
# of order 1: said as the likely cause rather than the general list.
HUGE_WEIGHT = 1e3


class VanishedStreak:
    """Consecutive ``backward()`` calls whose gradients were all exactly 0 (with a loss not 0)."""

    def __init__(self) -> None:
        self.backwards = 0
        self._reset()

    def clear(self) -> None:
        """No streak (any gradient not 0): one attribute read on the hot path when none is running."""
        if self.backwards:
            self._reset()

    def _reset(self) -> None:
        self.first_step = -1  # the streak's first backward (watch.step), -1: no streak
        self.first_updates = 0  # optimizer steps seen when it began
        self.first_counts: Dict[int, int] = {}  # each optimizer's steps then (the report's "since")
        self.backwards = 0
        self.reported = False

    def see(self, step: int, updates: int, counts: Dict[int, int], needed: int) -> bool:
        """One more all-zero backward; True once the streak is long enough to report (once)."""
        if self.first_step < 0:
            self.first_step, self.first_updates, self.first_counts = step, updates, dict(counts)
        self.backwards += 1
        if self.reported or self.backwards < needed:
            return False
        # With an optimizer: that many of its steps too (a loop without one counts backward calls).
        if updates and updates - self.first_updates < needed - 1:
            return False
        self.reported = True
        return True


class VanishedRule(WatchHost):
    """The watch's side of it: a mixin of :class:`watch.Watch` (uses its ``vanished`` streak)."""

    vanished: VanishedStreak

    def _vanished_check(self, grads: Any, table: Any, frame: Any, loss: Any) -> None:
        """After an exact read of this backward's gradients (``table``: their extremes)."""
        needed = int(self.config.dead_steps)
        if not grads or needed <= 0 or any(low != 0.0 or high != 0.0 for low, high in table):
            self.vanished.clear()  # deadSteps 0 turns the rule off, as it does the dead-output rule
            return
        value = _loss_value(loss)
        if value is None or value == 0.0 or not math.isfinite(value):
            self.vanished.clear()  # a perfect fit (or a loss we cannot read) explains zero gradients
            return
        if not self.vanished.see(self.step, self.updates, self.optimizers.counts, needed):
            return
        if not self._may_report(self.config.mode):
            return
        self._vanished_report(grads, value, frame)

    def _vanished_report(self, grads: Any, value: float, frame: Any) -> None:
        streak = self.vanished
        report = R.base("vanished_grad", "backward", self.step, frame, self.config.mode)
        report["params_with_grad"] = len(grads)
        report["example_param"] = self._qualify(grads[0][0], grads[0][2], frame)
        report["loss"] = value
        report["backwards"] = streak.backwards
        report["dead_since_counts"] = streak.first_counts  # read and dropped by ``_count_steps``
        report["dead_since"] = streak.first_step  # without an optimizer: in backward calls
        report.update(self._largest_weight(frame))
        self._emit(report, frame, about=grads[0][1])

    def _largest_weight(self, frame: Any) -> Dict[str, Any]:
        """The parameter of largest magnitude (a report path: one read of every parameter)."""
        entries = [(path, p, module) for path, p, module in self.names.parameters() if p.numel()]
        if not entries:
            return {}
        table = extremes_of([p.detach() for _, p, _ in entries])
        sizes = [max(abs(low), abs(high)) for low, high in table]
        best = max(range(len(sizes)), key=sizes.__getitem__)
        path, _, module = entries[best]
        return {"largest_weight": [self._qualify(path, module, frame), sizes[best]], "huge": sizes[best] >= HUGE_WEIGHT}


def _loss_value(loss: Any) -> Optional[float]:
    try:
        if loss is None or loss.numel() != 1:
            return None
        return float(loss.detach().reshape(()).float().item())
    except Exception:
        return None
