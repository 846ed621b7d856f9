"""Where the model and its batches live: the facts behind ``model_on_cpu`` and ``cpu_batches``.

Read only from what the recorder already sees (no ``Tensor.to`` wrapper, no TorchFunctionMode;
a first version patched ``Tensor.to`` and was reverted, see ``docs/monitor.md``):

- the batch a training ``DataLoader`` iteration yields (its first tensor's device, whether it is
  pinned, the bytes of its CPU tensors) and when it was yielded;
- the first training forward of the root module in the step: its first parameter's device, its
  first input's device, and when it started. The time from the yield to that forward is where a
  script copies its batch (``x = x.to(device)``); on CUDA a blocking copy also waits there for
  the GPU work still queued, so the stream is asked (``query()``, no sync) whether it was idle
  at the yield;
- once, at the ``CHECK_AT``-th step: whether every parameter of the training models is on the
  CPU while an accelerator is available and nothing was ever allocated on it.

Nothing is read per step on a CPU run but two device types (the batch is only looked at once
the model was seen on an accelerator). The judging is pure (:mod:`transfers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any, Dict, List, Optional, Tuple

CHECK_AT = 3  # the step the model's device is checked at (once)
MAX_ITEMS = 16  # tensors of a batch looked at (nested tuples, lists, dicts)


def accelerator(torch: Any) -> Optional[Tuple[str, bool]]:
    """``(device type, used)`` of an available accelerator, else None. ``used``: something was
    allocated on it (or we cannot tell: then True, so that no verdict is made)."""
    name = None
    try:
        acc = getattr(torch, "accelerator", None)
        if acc is not None and callable(getattr(acc, "is_available", None)):
            if acc.is_available():
                name = acc.current_accelerator().type
        elif torch.cuda.is_available():
            name = "cuda"
        elif getattr(getattr(torch.backends, "mps", None), "is_available", lambda: False)():
            name = "mps"
    except Exception:
        return None
    if name is None:
        return None
    return name, _used(torch, name)


def _used(torch: Any, name: str) -> bool:
    module: Any = getattr(torch, name, None)
    try:
        if name == "mps":
            return int(module.driver_allocated_memory()) > 0
        if not module.is_initialized():
            return False  # no context: nothing was ever allocated on it
        return int(module.max_memory_allocated()) > 0
    except Exception:
        return True


def _tensors(torch: Any, batch: Any) -> List[Any]:
    out: List[Any] = []
    stack = [batch]
    while stack and len(out) < MAX_ITEMS:
        item = stack.pop(0)
        if isinstance(item, torch.Tensor):
            out.append(item)
        elif isinstance(item, (tuple, list)):
            stack.extend(item[:MAX_ITEMS])
        elif isinstance(item, Mapping):  # dicts and mappings such as HF ``BatchEncoding``
            stack.extend(list(item.values())[:MAX_ITEMS])
    return out


def first_parameter(model: Any) -> Any:
    """``next(model.parameters(), None)`` without its generators: the same module order (the
    module, then its children depth first) in 0.7-1.2 us for a Linear where ``parameters()``
    takes 6-11 us (timeit, best of 3 x 20,000 calls, 3 rounds, under load 4.8)."""
    stack = [model]
    while stack:
        module = stack.pop()
        own = getattr(module, "_parameters", None)
        if own is None:  # not an nn.Module
            return next(iter(module.parameters()), None) if hasattr(module, "parameters") else None
        for param in own.values():
            if param is not None:
                return param
        stack.extend(child for child in reversed(list(module._modules.values())) if child is not None)
    return None


class DeviceWatch:
    """Per-step device facts for :class:`transfers.CpuBatches`; ``accel`` names the device types
    taken for accelerators (default: any but ``cpu`` and ``meta``; the tests use ``meta``)."""

    def __init__(self, torch: Any, accel: Optional[str] = None) -> None:
        self.torch, self.accel = torch, accel
        self.model_type: Optional[str] = None  # device type of the model at the last forward
        self.model_device: Any = None
        self.yield_t: Optional[float] = None
        self.batch: Optional[Dict[str, Any]] = None
        self.copy: Optional[Dict[str, Any]] = None
        self.steps = 0
        self.probe = accelerator  # replaced in tests

    def is_accel(self, device_type: Optional[str]) -> bool:
        if device_type is None:
            return False
        return device_type == self.accel if self.accel else device_type not in ("cpu", "meta")

    def yielded(self, batch: Any) -> None:
        """A training DataLoader iteration returned ``batch``."""
        if not self.is_accel(self.model_type):
            return
        self.yield_t = perf_counter()
        tensors = _tensors(self.torch, batch)
        if not tensors:
            self.batch = None
            return
        first = tensors[0]
        on_cpu = first.device.type == "cpu"
        strided = self.torch.strided  # sparse/nested tensors have no ``nbytes`` or pinning to ask
        self.batch = {
            "batch": first.device.type,
            "pinned": bool(on_cpu and first.layout == strided and first.is_pinned()),
            "bytes": sum(
                t.numel() * t.element_size() for t in tensors if t.device.type == "cpu" and t.layout == strided
            ),
            "busy": self._busy() if on_cpu else None,
        }

    def _busy(self) -> Optional[bool]:
        if self.model_type != "cuda":
            return None  # no cheap question to ask this device
        try:
            return not self.torch.cuda.current_stream(self.model_device).query()
        except Exception:
            return None

    def forward(self, model: Any, inputs: Any, start: float) -> None:
        """The step's first training forward of the root module ``model`` starts at ``start``."""
        # Read again each step: a cached parameter goes stale after a ``.to()`` that makes new
        # ones (overwrite_module_params_on_conversion) and would keep a deleted model alive.
        param = first_parameter(model)
        if param is None:
            return
        self.model_device = param.device
        self.model_type = self.model_device.type
        batch, yield_t = self.batch, self.yield_t
        self.batch = self.yield_t = None
        if batch is None or yield_t is None or not self.is_accel(self.model_type):
            return
        tensors = _tensors(self.torch, inputs)
        self.copy = dict(
            batch,
            model=self.model_type,
            input=tensors[0].device.type if tensors else None,
            gap=max(0.0, start - yield_t),
        )

    def step_facts(self, models: List[Any]) -> Optional[Dict[str, Any]]:
        """The facts of the step that just ended (None when there are none), then a new step.
        ``models``: weak references to the training models seen."""
        self.steps += 1
        facts: Dict[str, Any] = {}
        if self.copy is not None:
            facts["copy"], self.copy = self.copy, None
        self.batch = self.yield_t = None
        if self.steps == CHECK_AT:
            facts["model"] = self.model_facts(models)
        return facts or None

    def model_facts(self, models: List[Any]) -> Optional[Dict[str, Any]]:
        acc = self.probe(self.torch)
        if acc is None:
            return None
        params = [p for ref in models if (m := ref()) is not None for p in m.parameters()]
        return {
            "accelerator": acc[0],
            "used": acc[1],
            "params": len(params),
            "cpu_params": sum(1 for p in params if p.device.type == "cpu"),
            # a lazy module not run yet (``LazyLinear``) has no size: its numel() raises
            "values": sum(p.numel() for p in params if not self.torch.nn.parameter.is_lazy(p)),
        }
