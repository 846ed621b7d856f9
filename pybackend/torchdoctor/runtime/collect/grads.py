"""The gradients of the most recent backward through a traced model.

When a root call returns a tensor that is part of an autograd graph, :meth:`GradWatch.arm` puts
a pre-hook on that tensor's ``grad_fn``. If a backward reaches it, the hook queues a callback on
the autograd engine, which runs once that whole backward is done (every ``.grad`` accumulated):
:meth:`GradWatch._after_backward` notes, for each parameter of the root, a weak reference to its
gradient and the gradient's version and, when the time budget samples this backward, reduces
the gradients on their devices (``_foreach_norm`` of orders 1, 2 and inf; no host sync).

At snapshot time a gradient still alive and unchanged is described exactly (the usual pause,
right after ``loss.backward()``); one freed by ``zero_grad()`` or changed in place since is
described by the sampled reductions of that backward, else of the latest sampled one. Nothing
is held: the gradients live exactly as long as the program keeps them.

A backward that never reaches the model's output (a loss built from something else) is not
seen; the snapshot then reads the parameters' current ``.grad``.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, List, Optional

from .reduce import GRAD_WIDTH, Rows, grad_partials


class GradEntry:
    __slots__ = ("param", "grad", "version", "count", "partials")

    def __init__(self, param_ref: Any, grad: Any) -> None:
        self.param = param_ref  # weakref.ref to the Parameter
        self.grad = weakref.ref(grad)
        try:
            self.version = grad._version
        except Exception:
            self.version = -1
        self.count = 0  # elements, when reduced
        self.partials: Any = None  # (sum|g|, ‖g‖, max|g|): a row of the root's Rows, if sampled


class GradRecord:
    """The gradients after one backward through the output of a root's pass."""

    __slots__ = ("root", "pass_number", "backward_number", "entries", "sampled")

    def __init__(self, root_ref: Any, pass_number: int, backward_number: int, sampled: bool) -> None:
        self.root = root_ref
        self.pass_number = pass_number
        self.backward_number = backward_number
        self.entries: List[GradEntry] = []
        self.sampled = sampled


class GradState:
    __slots__ = ("root", "latest", "sampled", "params", "refresh", "rows")

    def __init__(self, torch: Any, root_ref: Any) -> None:
        self.root = root_ref
        self.rows = Rows(torch, GRAD_WIDTH)  # the sampled reductions, reused by each sampled backward
        self.latest: Optional[GradRecord] = None
        self.sampled: Optional[GradRecord] = None
        self.params: Optional[list] = None  # weakrefs to the root's parameters (walking them is slow)
        self.refresh = 0  # backwards until the list is read again


PARAMS_REFRESH = 64  # backwards between two reads of a root's parameter list


class GradWatch:
    def __init__(self, torch: Any, budget: Any, on_error: Any) -> None:
        self._torch = torch
        self.budget = budget
        self._on_error = on_error
        self._lock = threading.Lock()
        self.states: dict = {}  # id(root) -> GradState
        self.backwards = 0
        engine = getattr(getattr(torch.autograd, "Variable", None), "_execution_engine", None)
        self._queue = getattr(engine, "queue_callback", None)

    def arm(self, current: Any, root: Any, output: Any) -> None:
        """After a root call returned: watch for a backward through its output."""
        if self._queue is None or not current.grad_enabled:
            return
        try:
            t = _first_with_grad_fn(output, self._torch.Tensor)
            if t is None:
                return
            state = self._state(root)
            if not state.params:
                return  # nothing of the root's to watch (a loss module)
            root_ref = weakref.ref(root)
            number = current.number
            queue = self._queue
            done = self._after_backward
            on_error = self._on_error

            def reached(grad_outputs: Any) -> None:
                try:
                    queue(lambda: done(root_ref, number))
                except Exception as exc:
                    on_error(exc)
                return None

            t.grad_fn.register_prehook(reached)
        except Exception as exc:
            self._on_error(exc)

    def _state(self, root: Any) -> GradState:
        with self._lock:
            state = self.states.get(id(root))
            if state is None or state.root() is not root:
                state = self.states[id(root)] = GradState(self._torch, weakref.ref(root))
        if state.params is None or state.refresh <= 0:
            state.params = [weakref.ref(p) for p in root.parameters()]
            state.refresh = PARAMS_REFRESH
        return state

    def _after_backward(self, root_ref: Any, pass_number: int) -> None:
        try:
            root = root_ref()
            if root is None:
                return
            state = self._state(root)
            state.refresh -= 1
            sampled = self.budget.allow()
            with self._lock:
                self.backwards += 1
                record = GradRecord(root_ref, pass_number, self.backwards, sampled)
            entries = record.entries
            for ref in state.params or ():  # _state() filled it
                p = ref()
                g = p.grad if p is not None else None
                if g is not None:
                    entries.append(GradEntry(ref, g))
            if sampled and entries:
                start = time.perf_counter()
                strided = self._torch.strided
                grads = [
                    (e, g)
                    for e, g in ((e, e.grad()) for e in entries)
                    if g is not None and g.layout == strided and g.numel() > 0
                ]
                with self._torch.no_grad():
                    partials = grad_partials(self._torch, [g for _, g in grads], state.rows)
                for (entry, g), part in zip(grads, partials):
                    entry.partials = part
                    entry.count = int(g.numel())
                self.budget.spend(time.perf_counter() - start)
            with self._lock:
                state.latest = record
                if sampled:
                    state.sampled = record
                for key in [k for k, s in self.states.items() if s.root() is None]:
                    del self.states[key]
        except Exception as exc:
            self._on_error(exc)

    def state_for(self, root: Any) -> Optional[GradState]:
        with self._lock:
            state = self.states.get(id(root))
        if state is None or state.latest is None or state.root() is not root:
            return None
        return state


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
