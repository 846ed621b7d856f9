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
this step's ``backward()``).
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, List, Tuple

from .detect import checkable
from .grads import extremes_of

FLOWS, NO_FLOW, NO_PARAMS, UNKNOWN = "flows", "no_flow", "no_params", "unknown"
PROBE = 8
MAX_PENDING = 16


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
