"""A dead output needs evidence that no gradient flows: zero-initialised layers are learning.

An all-zero output of a module whose input is not zero, several steps in a row, is a dead unit
when nothing can flow through it: a ReLU (or any parameterless module) whose output is 0
everywhere has a zero gradient everywhere, so its zeros are evidence enough. A module with
trainable parameters is different: LoRA's ``B`` matrix and adaLN-Zero's modulation start at
exactly zero, so their output is 0 until the first optimizer step (for every micro-step of a
gradient accumulation), yet their parameters' gradients (output gradient times input) are not.
Such a module is dead only when its parameters' gradients are zero too (or never written by a
``backward()``).

:meth:`DeadEvidence.verdict` reads at most ``PROBE`` of the module's trainable parameters'
gradients, only when a zero output has lasted ``deadSteps``: ``FLOWS`` (a gradient is not zero:
not dead), ``NO_FLOW`` (they are zero: dead), ``NO_PARAMS`` (parameterless or frozen: the zeros
decide), ``UNKNOWN`` (no gradient yet, e.g. after ``zero_grad()``: the watch asks again after
this step's ``backward()``). :class:`DeadRule` is the watch's side of it (a mixin of
:class:`watch.Watch`).
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Dict, List, Tuple

from . import report as R
from .detect import checkable, extremes, iter_tensors
from .frames import called_by_loss, outermost_module, user_frame
from .grads import extremes_of
from .host import WatchHost

FLOWS, NO_FLOW, NO_PARAMS, UNKNOWN = "flows", "no_flow", "no_params", "unknown"
PROBE = 8
MAX_PENDING = 16


# torch's own modules whose all-zero output from a non-zero input is the failure itself (a dead
# ReLU, a pooling of dead units) and never their design or chance: dropout's zeros are chance.
_ZERO_BY_CHANCE = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")


def zeros_are_evidence(module: Any) -> bool:
    """A parameterless module's all-zero output says it is dead only for torch's own layers
    (activations, pooling...), not dropout. A user's parameterless module may output zeros by
    design (DARTS' "none" candidate: ``x * 0``) or by chance (a DropPath that drops the whole
    batch of one image, steps in a row at a rate of 0.4): nothing is said of those."""
    cls = type(module)
    if cls.__name__ in _ZERO_BY_CHANCE:
        return float(getattr(module, "p", 0.0)) >= 1.0  # dropping everything is no chance
    return cls.__module__.startswith("torch.nn.")


# A streak counted in optimizer steps is also reached after this many backwards a step: an
# optimizer that never steps again must not hide a dead layer for ever.
_BACKWARDS_PER_STEP = 8


class DeadEvidence:
    def __init__(self) -> None:
        # id(module) -> (weakref to it, what the report needs, kept from the forward that saw it)
        self.pending: Dict[int, Tuple["weakref.ref[Any]", Dict[str, Any]]] = {}

    def verdict(self, module: Any) -> str:
        params = []
        for p in module.parameters():
            if p.requires_grad:
                params.append(p)
                if len(params) >= PROBE:
                    break
        if not params:
            return NO_PARAMS
        grads = [p.grad for p in params if p.grad is not None and checkable(p.grad)]
        if not grads:
            return UNKNOWN
        return FLOWS if any(low != 0.0 or high != 0.0 for low, high in extremes_of(grads)) else NO_FLOW

    def wait(self, module: Any, facts: Dict[str, Any]) -> None:
        """Judge ``module`` again after this step's backward (``facts``: its report so far)."""
        if len(self.pending) < MAX_PENDING:
            self.pending[id(module)] = (weakref.ref(module), facts)

    def after_backward(self) -> List[Tuple[Any, Dict[str, Any], str]]:
        """``(module, facts, verdict)`` of each module waiting for this backward."""
        waiting, self.pending = self.pending, {}
        found = []
        for ref, facts in waiting.values():
            module = ref()
            if module is not None:
                found.append((module, facts, self.verdict(module)))
        return found


class DeadRule(WatchHost):
    """The dead-output rule of :class:`watch.Watch` (uses its ``config``, ``step``, ``_dead``, ``dead``)."""

    dead: DeadEvidence
    _dead: Dict[int, List[Any]]

    def _dead_hit(self, module, inputs, t, before=None) -> None:
        """``before``: the extremes of the input an in-place module has just overwritten."""
        if self.config.dead_steps <= 0:
            return
        tensors = list(iter_tensors(inputs))[: R.MAX_INPUTS]
        seen_in = [before] if before is not None else [extremes(x) for x in tensors]
        if not seen_in or all(low == 0.0 and high == 0.0 for low, high in seen_in):
            return  # zeros in, zeros out: the cause is upstream (or the data)
        span = self._dead.get(id(module))
        if span is None or span[1] < self.step - 1:
            # with the optimizers' step counts when the streak began: a report is counted in
            # optimizer steps, and a GAN runs two or three backwards per step
            span = self._dead[id(module)] = [self.step, self.step, dict(self.optimizers.counts)]
        span[1] = self.step
        length = self._streak_length(module, span)
        if length is None or length < self.config.dead_steps or not self._may_report(self.config.mode):
            return
        if called_by_loss(sys._getframe(), module):  # a hinge that holds (2026-12-07): the loss is at its floor
            del self._dead[id(module)]
            return
        evidence = self.dead.verdict(module)
        if evidence == FLOWS or (evidence == NO_PARAMS and not zeros_are_evidence(module)):
            # zero-initialised, and learning (LoRA's B, adaLN-Zero); or a module of the user's
            # with nothing to learn whose zeros are its design (DARTS' "none" op) or chance
            # (DropPath on a batch of one)
            del self._dead[id(module)]
            return
        facts = R.output_facts(t, inputs, 0.0, 0.0, self.config.threshold)
        if before is not None:
            facts["inputs_min"], facts["inputs_max"] = before
        facts["dead_since"] = span[0]
        facts["dead_since_counts"] = span[2]  # read and dropped by ``_count_steps``
        if evidence == UNKNOWN:  # no gradient yet: this step's backward will tell
            facts["hint"] = outermost_module(sys._getframe())
            self.dead.wait(module, facts)
            return
        frame = user_frame()
        report = R.base("dead_output", "forward", self.step, frame, self.config.mode)
        report.update(R.module_facts(self.names, module, frame, outermost_module(sys._getframe())))
        report.update(facts)
        report["evidence"] = evidence
        self._emit(report, frame, about=module)

    def _streak_length(self, module: Any, span: List[Any]) -> Any:
        """How long the zero streak has lasted, in the steps its report will count: the optimizer
        steps of the optimizer the report names (:mod:`steps`), else ``backward()`` calls. Two
        optimizers stepping in turn (a GAN, DARTS' bilevel loop) run two backwards a step: counted
        in backwards, a streak of 3 was called dead after 2 steps, and reported at both backwards.
        None: this optimizer step's length was reported already."""
        backwards = span[1] - span[0] + 1
        found = self.optimizers.step_of(list(module.parameters()))
        if found is None:
            return backwards
        now, optimizer = found
        length = now - span[2].get(id(optimizer), 0) + 1
        if backwards >= _BACKWARDS_PER_STEP * self.config.dead_steps:
            length = max(length, self.config.dead_steps)  # an optimizer that stopped stepping: not forever
        if len(span) > 3 and span[3] == length:
            return None
        span[3:] = [length]
        return length

    def _dead_after_backward(self, frame) -> None:
        """Modules with parameters whose zero output waited for a backward: dead if no gradient came."""
        for module, facts, evidence in self.dead.after_backward():
            if evidence == FLOWS:
                self._dead.pop(id(module), None)
                continue
            if not self._may_report(self.config.mode):
                return
            frame = user_frame(frame)
            report = R.base("dead_output", "forward", self.step, frame, self.config.mode)
            report.update(R.module_facts(self.names, module, frame, facts.pop("hint", None)))
            report.update(facts)
            report["evidence"] = evidence
            self._emit(report, frame, about=module)
            return
