"""A missing ``zero_grad()``: an optimizer step that applies gradients it already applied.

Gradient accumulation (several ``backward`` calls, then one step) is legitimate; what is never
right is an optimizer stepping on gradients that still hold what its previous step consumed.
Each optimizer (seen through torch's global step hooks) goes through three states:

- after its ``step()``: STEPPED (its gradients are spent);
- at the next ``backward()``: FRESH if its parameters' gradients are clean (None or zero),
  STALE if not (the new gradients will be added to spent ones); a STALE optimizer whose
  gradients are clean again by a later ``backward()`` becomes FRESH;
- at its next ``step()``: STALE is the finding.

Judging at the step, not at the backward, keeps GAN-style loops quiet: the generator's backward
may flow into the discriminator's spent gradients, but those are zeroed before the
discriminator steps again. The test reads at most ``PROBE`` gradients per optimizer, and only
when they are not None (``zero_grad()`` sets them to None by default), so a correct loop pays
a few attribute reads per step.
"""

from __future__ import annotations

import weakref
from itertools import repeat
from operator import attrgetter, is_
from typing import Any, Dict, Optional, Tuple

from .detect import checkable
from .grads import extremes_of

STEPPED, FRESH, STALE = "stepped", "fresh", "stale"
PROBE = 8
_GRAD = attrgetter("grad")


class StaleGradTracker:
    def __init__(self) -> None:
        self._states: Dict[int, Tuple["weakref.ref[Any]", str, Optional[Dict[str, Any]]]] = {}

    def after_step(self, optimizer: Any) -> None:
        entry = self._states.get(id(optimizer))
        ref = entry[0] if entry is not None and entry[0]() is optimizer else weakref.ref(optimizer)
        self._states[id(optimizer)] = (ref, STEPPED, None)

    def before_backward(self) -> None:
        for key, (ref, state, _info) in list(self._states.items()):
            optimizer = ref()
            if optimizer is None:
                del self._states[key]
            elif state in (STEPPED, STALE):
                stale = _stale_gradients(optimizer)
                self._states[key] = (ref, STALE if stale else FRESH, stale)

    def before_step(self, optimizer: Any) -> Optional[Dict[str, Any]]:
        """What makes this step wrong (``{"params", "example"}``), or None."""
        entry = self._states.get(id(optimizer))
        if entry is None or entry[0]() is not optimizer or entry[1] != STALE:
            return None
        return entry[2]


def _stale_gradients(optimizer: Any) -> Optional[Dict[str, Any]]:
    """``{"params": n holding a gradient, "example": a parameter with a non-zero one}`` or None."""
    groups = optimizer.param_groups
    if all(all(map(is_, map(_GRAD, group["params"]), repeat(None))) for group in groups):
        return None  # the usual case (after zero_grad()), at every backward: C-level passes
    holding = [p for group in groups for p in group["params"] if p.grad is not None]
    probe = [p for p in holding if checkable(p.grad)][:PROBE]  # sparse gradients are not read
    table = extremes_of([p.grad for p in probe])
    for p, (low, high) in zip(probe, table):
        if low != 0.0 or high != 0.0:
            return {"params": len(holding), "example": p}
    return None
