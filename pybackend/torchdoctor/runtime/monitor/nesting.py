"""Which optimizer step hooks make a step: a subclass's ``step`` calling ``super().step()``.

torch wraps each optimizer class's ``step`` with the step hooks the first time one of its
instances is made, so a custom optimizer that subclasses ``SGD`` (a NaN guard, a wrapper) and calls
``super().step()`` runs the global hooks twice per step once a plain ``SGD`` exists: pre, pre,
post, post. Only the outermost pair is a step. A pre-hook whose post-hook never ran (a ``step()``
that raised) must not make the next step look inner: when a pre-hook comes while one is open, the
stack says which it is (the outer call's torch wrapper, for this optimizer, is still running).
Per step: one list append and one pop; the stack is read only when a pre-hook finds one open.
"""

from __future__ import annotations

import sys
from typing import Any, List

MAX_DEPTH = 64  # frames looked through for an outer step call


class StepNesting:
    def __init__(self) -> None:
        self.open: List[bool] = []  # one per pre-hook whose post-hook has not run: True if inner

    def enter(self, optimizer: Any) -> bool:
        """A pre-hook, called from the recorder's hook: True when it starts a step (False: an inner
        call of a step in progress)."""
        inner = False
        if self.open:
            inner = _inside_step_of(optimizer, sys._getframe(2))  # 2: torch's wrapper of step
            if not inner:
                self.open.clear()  # left by a step() that raised
        self.open.append(inner)
        return not inner

    def leave(self) -> bool:
        """A post-hook: True when it ends a step."""
        return not self.open.pop() if self.open else True


def _inside_step_of(optimizer: Any, wrapper: Any) -> bool:
    """Whether a frame above ``wrapper`` runs the same code (torch's step wrapper) for ``optimizer``."""
    code, frame = wrapper.f_code, wrapper.f_back
    for _ in range(MAX_DEPTH):
        if frame is None:
            return False
        if frame.f_code is code and frame.f_locals.get("self") is optimizer:
            return True
        frame = frame.f_back
    return False
