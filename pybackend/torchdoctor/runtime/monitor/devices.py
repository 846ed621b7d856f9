"""Where a step's batch comes from: the facts behind the ``cpu_batches`` verdict.

A mixin of :class:`recorder.Monitor` (kept apart for size). Each step it notes where the model's
parameters live (its first parameter, looked up once per model: ``model.to()`` keeps the
Parameter objects, so their ``device`` follows a later move) and where the first tensor input of
the step's first training forward lives. Once a model is seen on an accelerator
(``verdicts.accelerator``: by default any device type but ``cpu`` and ``meta``), ``Tensor.to``,
``Tensor.cuda`` and ``Tensor.xpu`` are wrapped (:func:`hooks.copy_wrapper`) to see the copies
of CPU tensors to another device made while grad is enabled: their bytes, the time inside the
call, whether the source was pinned and the copy ``non_blocking``, and the line. A run whose
model stays on the CPU never wraps them, so its hot path is unchanged. A training forward's
input counts as copied from the host when it is the result of such a copy made since the
previous step, or a view of one.
"""

from __future__ import annotations

import os
import weakref
from collections import deque
from typing import Any, Callable, Deque, Dict, Optional, Tuple

from ..anomaly.frames import user_frame
from . import hooks

COPY_METHODS = ("to", "cuda", "xpu")
RECENT_COPIES = 4  # the forward's input is among the last copies before it
MAX_COPY_SITES = 64
MAX_MODELS = 8

# (result, source bytes, pinned, non_blocking, site)
Copy = Tuple["weakref.ReferenceType[Any]", int, bool, bool, Optional[Dict[str, Any]]]


def site(frame: Any) -> Optional[Dict[str, Any]]:
    """``{"path", "line"}`` of the user's frame at or outside ``frame``."""
    user = user_frame(frame)
    return {"path": os.path.abspath(user.f_code.co_filename), "line": user.f_lineno} if user is not None else None


class Devices:
    torch: Any
    verdicts: Any
    sites: Dict[str, Any]
    _is_compiling: Callable[[], bool]

    def _error(self, exc: BaseException) -> None:
        raise NotImplementedError

    def _patch(self, owner: Any, name: str, make: Callable[[Callable], Callable]) -> None:
        raise NotImplementedError

    def _init_devices(self) -> None:
        self.model_param: Any = None  # weak reference to the current model's first parameter
        self.first_params: Dict[int, Tuple[Any, Any]] = {}  # id(model) -> (ref(model), ref(param) | None)
        self.step_device: Optional[Tuple[str, str]] = None  # (model's device type, input's device type)
        self.step_copy: Optional[Copy] = None
        self.copies: Deque[Copy] = deque(maxlen=RECENT_COPIES)
        self.h2d_bytes = 0
        self.h2d_seconds = 0.0
        self.copy_sites: Dict[Tuple[Any, int], Optional[Dict[str, Any]]] = {}
        self.copies_patched = False

    def model_changed(self, module: Any) -> None:
        """The step's first training forward is another module's (twice a step in a GAN): cached."""
        entry = self.first_params.get(id(module))
        if entry is None or entry[0]() is not module:
            if len(self.first_params) >= MAX_MODELS:
                self.first_params.clear()
            param = next(module.parameters(), None)
            entry = (weakref.ref(module), weakref.ref(param) if param is not None else None)
            self.first_params[id(module)] = entry
        self.model_param = entry[1]

    def inputs_seen(self, x: Any) -> None:
        """``x``: the first tensor input of a training forward (the step's first, or a later one)."""
        if self.step_device is None:
            param = self.model_param() if self.model_param is not None else None
            if param is None:
                return
            if param.is_cpu:  # cheaper than .device.type, read every step
                model = "cpu"
            else:
                model = param.device.type
                if not self.copies_patched and self.verdicts.accelerator(model):
                    self._patch_copies()
            self.step_device = (model, "cpu" if x.is_cpu else x.device.type)
        if self.copies and self.step_copy is None:
            base = x._base  # x = batch.to(device).unsqueeze(0): a view of the copy
            for entry in reversed(self.copies):
                made = entry[0]()
                if made is not None and (made is x or made is base):
                    self.step_copy = entry
                    break

    def _patch_copies(self) -> None:
        self.copies_patched = True
        from .recorder import current

        for name in COPY_METHODS:
            if callable(getattr(self.torch.Tensor, name, None)):
                self._patch(self.torch.Tensor, name, lambda o: hooks.copy_wrapper(o, current))

    def copied(self, source: Any, result: Any, non_blocking: bool, seconds: float, frame: Any) -> None:
        """A CPU tensor copied to another device (from :func:`hooks.copy_wrapper`)."""
        torch = self.torch
        if self._is_compiling() or not torch.is_grad_enabled():
            return  # an evaluation's batch (under no_grad) is not a training step's
        try:
            nbytes = source.numel() * source.element_size()
            self.h2d_bytes += nbytes
            self.h2d_seconds += seconds
            try:
                pinned = bool(source.is_pinned())
            except Exception:
                pinned = False
            key = (frame.f_code, frame.f_lineno)
            where = self.copy_sites.get(key)
            if where is None and len(self.copy_sites) < MAX_COPY_SITES:
                where = self.copy_sites[key] = site(frame)
            self.copies.append((weakref.ref(result), nbytes, pinned, bool(non_blocking), where))
        except Exception as exc:
            self._error(exc)

    def device_facts(self) -> Optional[Dict[str, Any]]:
        """The step's ``device`` field (``docs/monitor.md``); None when no training forward took a
        tensor from a model with parameters."""
        facts = self.step_device
        if facts is None:
            return None
        copy = self.step_copy
        if copy is not None and copy[4] is not None:
            self.sites["copy"] = copy[4]
        return {
            "model": facts[0],
            "input": facts[1],
            "copied": copy is not None,
            "pinned": copy is not None and copy[2],
            "non_blocking": copy is not None and copy[3],
            "h2d_bytes": self.h2d_bytes,
            "h2d_seconds": self.h2d_seconds,
        }

    def devices_reset(self) -> None:
        """At each step boundary: the next step's copies and forwards are its own."""
        self.step_device = None
        self.step_copy = None
        if self.copies:
            self.copies.clear()
        self.h2d_bytes = 0
        self.h2d_seconds = 0.0
