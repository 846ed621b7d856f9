"""The gradients of the most recent backward through a traced model.

When a root call returns a tensor that is part of an autograd graph, :meth:`GradWatch.arm` puts
a pre-hook on that tensor's ``grad_fn``. If a backward reaches it, the hook queues a callback on
the autograd engine, which runs once that whole backward is done (every ``.grad`` accumulated):
:meth:`GradWatch._after_backward` notes, for each parameter of the root, the gradient tensor and
its version. Nothing is reduced then: the statistics are computed when a snapshot is taken
(:mod:`collect_stats`), from the tensors noted, so the hot path costs a few Python calls per
backward. The gradients noted survive ``zero_grad()`` (which sets ``.grad`` to None), so a pause
in the next forward still shows them; a gradient changed in place since (``zero_grad(set_to_none
=False)``, clipping, accumulation) is reported as such.

Memory: holding gradients past ``zero_grad()`` costs up to one set of gradients. Above the byte
budget the statistics are reduced on the device at the end of the backward instead (fused
``_foreach_norm`` calls, no host sync) and no gradient is held.

A backward that never reaches the model's output (a loss built from something else) is not
seen; the snapshot then reads the parameters' current ``.grad``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, List, Optional

from .collect_tensors import nbytes


class GradEntry:
    __slots__ = ("param", "grad", "version", "device_stats")

    def __init__(self, param_ref: Any, grad: Any, version: int, device_stats: Any = None) -> None:
        self.param = param_ref  # weakref.ref to the Parameter
        self.grad = grad  # the gradient tensor (None when reduced on the device instead)
        self.version = version
        self.device_stats = device_stats  # [meanAbs·numel, norm, maxAbs, nonfinite] 0-d tensors


class GradRecord:
    """The gradients after one backward through the output of a root's pass."""

    __slots__ = ("root", "pass_number", "backward_number", "entries", "held_bytes")

    def __init__(self, root_ref: Any, pass_number: int, backward_number: int) -> None:
        self.root = root_ref
        self.pass_number = pass_number
        self.backward_number = backward_number
        self.entries: List[GradEntry] = []
        self.held_bytes = 0


class GradWatch:
    def __init__(self, torch: Any, keep_bytes: int, on_error: Any) -> None:
        self._torch = torch
        self.keep_bytes = keep_bytes
        self._on_error = on_error
        self._lock = threading.Lock()
        self.records: dict = {}  # id(root) -> latest GradRecord
        self.backwards = 0
        engine = getattr(getattr(torch.autograd, "Variable", None), "_execution_engine", None)
        self._queue = getattr(engine, "queue_callback", None)

    def arm(self, current: Any, root: Any, output: Any) -> None:
        """After a root call returned: watch for a backward through its output."""
        if self._queue is None or not current.grad_enabled:
            return
        try:
            t = _first_with_grad_fn(output, self._torch.Tensor)
            if t is None or next(root.parameters(), None) is None:
                return  # nothing to differentiate, or nothing of the root's to watch (a loss module)
            root_ref = weakref.ref(root)
            number = current.number
            queue = self._queue
            done = self._after_backward

            def reached(grad_outputs: Any) -> None:
                try:
                    queue(lambda: done(root_ref, number))
                except Exception as exc:
                    self._on_error(exc)
                return None

            t.grad_fn.register_prehook(reached)
        except Exception as exc:
            self._on_error(exc)

    def _after_backward(self, root_ref: Any, pass_number: int) -> None:
        try:
            root = root_ref()
            if root is None:
                return
            with self._lock:
                self.backwards += 1
                number = self.backwards
            record = GradRecord(root_ref, pass_number, number)
            params = [p for p in root.parameters() if p.grad is not None]
            total = sum(nbytes(p.grad) for p in params)
            old = self.records.get(id(root))
            held_elsewhere = sum(r.held_bytes for k, r in self.records.items() if k != id(root))
            if held_elsewhere + total <= self.keep_bytes:
                record.entries = [GradEntry(weakref.ref(p), p.grad, _version(p.grad)) for p in params]
                record.held_bytes = total
            else:
                record.entries = _reduce_on_device(self._torch, params)
            with self._lock:
                if old is not None:
                    old.entries = []
                self.records[id(root)] = record
                for key in [k for k, r in self.records.items() if r.root() is None]:
                    del self.records[key]
        except Exception as exc:
            self._on_error(exc)

    def record_for(self, root: Any) -> Optional[GradRecord]:
        with self._lock:
            return self.records.get(id(root))


def _first_with_grad_fn(value: Any, tensor_type: Any, depth: int = 0) -> Any:
    if isinstance(value, tensor_type):
        return value if value.grad_fn is not None else None
    if depth >= 3:
        return None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    for item in list(items)[:8]:
        found = _first_with_grad_fn(item, tensor_type, depth + 1)
        if found is not None:
            return found
    return None


def _reduce_on_device(torch: Any, params: list) -> List[GradEntry]:
    """Over budget: [sum|g|, ‖g‖, max|g|, non-finite count] per gradient, reduced where it lives."""
    entries = []
    with torch.no_grad():
        grads = [p.grad for p in params]
        try:
            ones = torch._foreach_norm(grads, 1)
            twos = torch._foreach_norm(grads, 2)
            infs = torch._foreach_norm(grads, float("inf"))
        except Exception:
            ones = [torch.linalg.vector_norm(g, 1) for g in grads]
            twos = [torch.linalg.vector_norm(g, 2) for g in grads]
            infs = [torch.linalg.vector_norm(g, float("inf")) for g in grads]
        for p, g, one, two, inf in zip(params, grads, ones, twos, infs):
            bad = g.numel() - torch.isfinite(g).sum() if g.is_floating_point() else g.new_zeros((), dtype=torch.long)
            entries.append(GradEntry(weakref.ref(p), None, _version(g), (one, two, inf, bad)))
    return entries


def _version(t: Any) -> int:
    try:
        return -1 if t.is_inference() else int(t._version)
    except Exception:
        return -1
