"""Switching the collection on and off: two global forward hooks and a backward watch.

:func:`install` is what :mod:`activation` runs when the program imports torch in a Torch Doctor
debug session; :func:`current` is what :mod:`snapshot` reads. Settings come from the debuggee's
environment:

- ``TORCHDOCTOR_COLLECT_KEEP_MB`` (default 256): bytes of module outputs, and separately of
  gradients, held between a pass and the next so that a snapshot can describe them exactly.
  Outputs over it keep their shapes but get no statistics; gradients over it are reduced on the
  device at the end of the backward instead.

Global hooks only (``torch.nn.modules.module.register_module_forward_pre_hook`` /
``register_module_forward_hook(always_call=True)``): no module of the program is touched.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Optional

from .collect_grads import GradWatch
from .collect_trace import DEFAULT_KEEP_BYTES, Tracer

KEEP_ENV = "TORCHDOCTOR_COLLECT_KEEP_MB"

_LOCK = threading.Lock()
_CURRENT: Optional["Collector"] = None


class Collector:
    def __init__(self, torch: Any, keep_bytes: int) -> None:
        self.torch = torch
        self.tracer = Tracer(torch, keep_bytes, on_pass_end=None)
        self.grads = GradWatch(torch, keep_bytes, self.tracer._error)
        self.tracer.on_pass_end = self.grads.arm
        self._handles: list = []

    @property
    def errors(self) -> list:
        return list(self.tracer.errors)

    def attach(self) -> None:
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


def install(keep_bytes: Optional[int] = None) -> Optional[Collector]:
    """Start collecting (replacing any collector already installed). Needs torch imported."""
    global _CURRENT
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    with _LOCK:
        if _CURRENT is not None:
            _CURRENT.detach()
            _CURRENT = None
        collector = Collector(torch, keep_bytes if keep_bytes is not None else _keep_bytes_from_env())
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


def _keep_bytes_from_env() -> int:
    raw = os.environ.get(KEEP_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_KEEP_BYTES
    return int(value * (1 << 20)) if value >= 0 else DEFAULT_KEEP_BYTES
