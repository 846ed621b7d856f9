"""Switching the collection on and off: two global forward hooks and a backward watch.

:func:`install` is what :mod:`activation` runs when the program imports torch in a Torch Doctor
debug session; :func:`current` is what :mod:`snapshot` reads. One setting, from the debuggee's
environment:

- ``TORCHDOCTOR_COLLECT_BUDGET`` (default 0.03): the fraction of the program's wall time the
  hot-path reductions may take (:mod:`collect_budget`). ``1`` reduces every pass and backward;
  ``0`` none (statistics then come only from outputs and gradients still alive at a pause).
  Shapes, dtypes and devices are noted at every call whatever it is.

Global hooks only (``torch.nn.modules.module.register_module_forward_pre_hook`` /
``register_module_forward_hook(always_call=True)``): no module of the program is touched.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Optional

from .budget import DEFAULT_FRACTION, TimeBudget
from .grads import GradWatch
from .trace import Tracer

BUDGET_ENV = "TORCHDOCTOR_COLLECT_BUDGET"

_LOCK = threading.Lock()
_CURRENT: Optional["Collector"] = None


class Collector:
    def __init__(self, torch: Any, budget: TimeBudget) -> None:
        self.torch = torch
        self.budget = budget
        self.tracer = Tracer(torch, budget)
        self.grads = GradWatch(torch, budget, self.tracer._error)
        self.tracer.on_pass_end = self.grads.arm
        self._handles: list = []

    @property
    def errors(self) -> list:
        return list(self.tracer.errors)

    def attach(self) -> None:
        if self._handles:
            return
        self.budget.restart()
        hooks = self.torch.nn.modules.module
        self._handles.append(hooks.register_module_forward_pre_hook(self.tracer.pre))
        self._handles.append(hooks.register_module_forward_hook(self.tracer.post, always_call=True))

    def detach(self) -> None:
        for handle in self._handles:
            try:
                handle.remove()
            except Exception:
                pass
        self._handles = []


def install(fraction: Optional[float] = None) -> Optional[Collector]:
    """Start collecting (replacing any collector already installed); None without torch."""
    global _CURRENT
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    with _LOCK:
        if _CURRENT is not None:
            _CURRENT.detach()
            _CURRENT = None
        budget = TimeBudget(fraction if fraction is not None else _fraction_from_env())
        collector = Collector(torch, budget)
        try:
            collector.attach()
        except BaseException:
            collector.detach()
            raise
        _CURRENT = collector
        return collector


def uninstall() -> None:
    global _CURRENT
    with _LOCK:
        if _CURRENT is not None:
            _CURRENT.detach()
            _CURRENT = None


def current() -> Optional[Collector]:
    return _CURRENT


def _fraction_from_env() -> float:
    try:
        value = float(os.environ.get(BUDGET_ENV, "").strip())
    except ValueError:
        return DEFAULT_FRACTION
    return value if 0.0 <= value <= 1.0 else DEFAULT_FRACTION
