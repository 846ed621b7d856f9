"""The forward trace: every module call of the most recent pass, as it happens.

Two global hooks feed a :class:`Tracer`: a forward pre-hook opens a :class:`Call` (inputs noted,
"running") and a forward hook registered with ``always_call=True`` closes it, either normally
(outputs noted) or, when torch calls it from its exception path, as "failed" with the
exception's type and message (the enclosing calls the exception goes through are
"propagated"). Calls still open when the program is paused stay "running".

A pass is everything from a call made with no module call open on this thread (a root call) to
its return. Each root keeps its latest pass and its latest sampled pass (at most
:data:`MAX_ROOTS` roots, the least recently used dropped); a pass notes at most
:data:`MAX_CALLS` calls. Memory is bounded and holds no tensor of the program: outputs are
noted by weak reference (with their version), so nothing lives longer than the program makes
it, and the allocator sees the program's own pattern.

Statistics: on a pass the time budget samples (:mod:`collect_budget`), each floating output is
reduced on its device right after its forward (:mod:`collect_reduce`), no host sync. At
snapshot time an output still alive and unchanged is described exactly instead (paused inside
a forward, or at an exception); otherwise the sampled statistics of this pass, else of the
latest sampled pass, say so.

Cost per module call on the hot path: two Python hooks noting references to torch's
shape/dtype/device objects and a weak reference. Calls made while torch compiles or inside a
backward (activation checkpointing recomputes forwards there) are not traced.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from types import FrameType
from typing import Any, Dict, List, Optional

from .budget import TimeBudget
from .reduce import ACTIVATION_WIDTH, Rows, activation_partials, reducible, relu_like
from .tensors import first_tensor, leaves

MAX_CALLS = 4096  # per pass; further calls are counted, not noted
MAX_ROOTS = 8

OK = "ok"
RUNNING = "running"
FAILED = "failed"
PROPAGATED = "propagated"


class Call:
    """One module call of a pass."""

    __slots__ = (
        "index",
        "module",
        "parent",
        "depth",
        "inputs",
        "outputs",
        "status",
        "out_ref",
        "out_version",
        "out_count",
        "out_batch",
        "partials",
        "error_type",
        "error_message",
        "in_ref",
        "in_version",
        "site",
    )

    def __init__(self, index: int, module_ref: Any, parent: int, depth: int, inputs: list) -> None:
        self.index = index
        self.module = module_ref  # weakref.ref to the nn.Module
        self.parent = parent  # index of the enclosing call, -1 for the root call
        self.depth = depth
        self.inputs = inputs
        self.outputs: Optional[list] = None
        self.status = RUNNING
        self.out_ref: Any = None  # weakref.ref to the first output tensor
        self.out_version = -1
        self.out_count = 0
        self.out_batch = 0
        self.partials: Any = None  # sampled reductions of that output: a row of the root's Rows
        self.error_type: Optional[str] = None
        self.error_message: Optional[str] = None
        self.in_ref: Any = None  # root call only: weakref.ref to the first input tensor (the batch)
        self.in_version = -1
        self.site: Optional[tuple] = None  # (file, line) of the code that called the module


class Pass:
    """One forward of one root module."""

    __slots__ = ("root", "number", "calls", "dropped", "failed", "grad_enabled", "sampled", "rows", "__weakref__")

    def __init__(self, root_ref: Any, number: int, grad_enabled: bool, sampled: bool, rows: Any = None) -> None:
        self.root = root_ref
        self.number = number  # passes of this root seen so far (1 = the first)
        self.calls: List[Call] = []
        self.dropped = 0  # calls past MAX_CALLS
        self.failed = False
        self.grad_enabled = grad_enabled
        self.sampled = sampled  # outputs reduced on the hot path
        self.rows = rows  # where they are written (the root's Rows, reused by its sampled passes)

    @property
    def complete(self) -> bool:
        return bool(self.calls) and self.calls[0].status == OK


class RootState:
    __slots__ = ("latest", "sampled", "count", "rows")

    def __init__(self, torch: Any) -> None:
        self.latest: Optional[Pass] = None
        self.sampled: Optional[Pass] = None
        self.count = 0
        self.rows = Rows(torch, ACTIVATION_WIDTH)


class Tracer:
    def __init__(self, torch: Any, budget: Optional[TimeBudget] = None, on_pass_end: Any = None) -> None:
        self._torch = torch
        self._tensor = torch.Tensor
        self._grad_enabled = torch.is_grad_enabled
        self._no_grad = torch.no_grad
        compiler = getattr(torch, "compiler", None)
        self._compiling = getattr(compiler, "is_compiling", None) or (lambda: False)
        self._graph_task = getattr(torch._C, "_current_graph_task_id", None) or (lambda: -1)
        self.budget = budget if budget is not None else TimeBudget()
        self.on_pass_end = on_pass_end  # callable(pass, root module, output) after a root call returns
        self._tls = threading.local()
        self._lock = threading.Lock()
        self._relu_like: Dict[type, bool] = {}
        self.roots: Dict[int, RootState] = {}  # id(root) -> state, least recently started first
        self.errors: List[str] = []
        # torch's module-call machinery: the frames between a hook and the code that called the module
        self._machinery = {getattr(sys.modules.get("torch.nn.modules.module"), "__file__", None)}

    # -- hooks (hot path) ---------------------------------------------------------------------

    def pre(self, module: Any, args: Any) -> None:
        try:
            if self._compiling():
                return
            stack = self._tls.__dict__.get("stack")
            if stack is None:
                stack = self._tls.stack = []
            if stack and stack[0][1].module() is module:
                stack.clear()  # a root call that never returned (KeyboardInterrupt...): start afresh
            if not stack:
                if self._graph_task() != -1:
                    return  # a forward recomputed inside a backward (activation checkpointing)
                current = self._start(module)
                parent = -1
            else:
                current, above = stack[-1]
                parent = above.index if above is not None else -1
            calls = current.calls
            if len(calls) >= MAX_CALLS:
                current.dropped += 1
                stack.append((current, None))
                return
            tensor = self._tensor
            if len(args) == 1 and isinstance(args[0], tensor):
                a = args[0]
                inputs = [(a.shape, a.dtype, a.device, a.requires_grad)]
            else:
                inputs = leaves(args, tensor)
            call = Call(len(calls), weakref.ref(module), parent, len(stack), inputs)
            call.site = self._site()
            if not stack:
                t = first_tensor(args, tensor)
                if t is not None:
                    call.in_ref = weakref.ref(t)
                    call.in_version = version_of(t)
            calls.append(call)
            stack.append((current, call))
        except Exception as exc:
            self._error(exc)

    def _site(self) -> Optional[tuple]:
        """Where the module was called: the first frame out of torch's call machinery (a few
        frame hops, no source read)."""
        f: Optional[FrameType] = sys._getframe(2)
        machinery = self._machinery
        while f is not None and f.f_code.co_filename in machinery:
            f = f.f_back
        return (f.f_code.co_filename, f.f_lineno) if f is not None else None

    def post(self, module: Any, args: Any, output: Any) -> None:
        try:
            if self._compiling():
                return  # dynamo traces hooks into the graph: they must be no-ops there
            stack = self._tls.__dict__.get("stack")
            if not stack:
                return
            at = len(stack) - 1
            while at >= 0 and stack[at][1] is not None and stack[at][1].module() is not module:
                at -= 1  # calls above this one never closed (another hook raised): drop them
            if at < 0:
                return
            current, call = stack[at]
            del stack[at:]
            if call is None:
                return
            if output is None and self._raised_here():
                self._close_failed(current, call)
                return
            self._close(current, call, output, module)
            if not stack and self.on_pass_end is not None:
                self.on_pass_end(current, module, output)
        except Exception as exc:
            self._error(exc)

    # -- helpers ------------------------------------------------------------------------------

    def _start(self, root: Any) -> Pass:
        key = id(root)
        sampled = self.budget.allow()
        with self._lock:
            state = self.roots.pop(key, None)
            if state is None or state.latest is None or state.latest.root() is not root:
                state = RootState(self._torch)  # new root (or a recycled id)
            self.roots[key] = state
            state.count += 1
            new = Pass(
                weakref.ref(root), state.count, bool(self._grad_enabled()), sampled, state.rows if sampled else None
            )
            state.latest = new
            if sampled:
                state.sampled = new
            self._trim()
        return new

    def _trim(self) -> None:
        """Forget roots that are gone, then the least recently used beyond MAX_ROOTS."""
        for key in [k for k, s in self.roots.items() if s.latest is not None and s.latest.root() is None]:
            del self.roots[key]
        while len(self.roots) > MAX_ROOTS:
            del self.roots[next(iter(self.roots))]

    def _close(self, current: Pass, call: Call, output: Any, module: Any) -> None:
        call.status = OK
        tensor = self._tensor
        if isinstance(output, tensor):
            t = output
            call.outputs = [(t.shape, t.dtype, t.device, t.requires_grad)]
        else:
            call.outputs = leaves(output, tensor)
            t = first_tensor(output, tensor)
            if t is None:
                return
        call.out_ref = weakref.ref(t)
        try:
            call.out_version = t._version
        except Exception:  # inference tensors have no version counter
            call.out_version = -1
        if current.sampled and reducible(t, self._torch):
            start = time.perf_counter()
            call.out_count = t.numel()
            call.out_batch = int(t.shape[0]) if t.dim() else 0
            units = self._relu_like.get(type(module))
            if units is None:
                units = self._relu_like[type(module)] = relu_like(type(module).__name__)
            with self._no_grad():
                call.partials = activation_partials(self._torch, t, units, current.rows.row(t.device, call.index))
            self.budget.spend(time.perf_counter() - start)

    def _close_failed(self, current: Pass, call: Call) -> None:
        exc = sys.exc_info()[1]
        if not current.failed:
            current.failed = True
            call.status = FAILED
        else:
            call.status = PROPAGATED
        call.error_type = type(exc).__name__
        try:
            call.error_message = str(exc)[:2000]
        except Exception:
            call.error_message = "(message unavailable)"

    @staticmethod
    def _raised_here() -> bool:
        """Called from ``Module._call_impl``'s exception path (not merely inside some handler)?"""
        exc = sys.exc_info()[1]
        tb = getattr(exc, "__traceback__", None)
        if tb is None:
            return False
        frame: Optional[FrameType] = sys._getframe(
            2
        )  # _raised_here <- post <- torch's _call_impl (maybe a wrapper more)
        for _ in range(3):
            if frame is None:
                return False
            if frame is tb.tb_frame:
                return True
            frame = frame.f_back
        return False

    def _error(self, exc: BaseException) -> None:
        if len(self.errors) < 20:
            self.errors.append(f"{type(exc).__name__}: {exc}")

    # -- snapshot side ------------------------------------------------------------------------

    def live_roots(self) -> List[RootState]:
        """States of the roots still alive, least recently started first."""
        with self._lock:
            return [s for s in self.roots.values() if s.latest is not None and s.latest.root() is not None]


def version_of(t: Any) -> int:
    try:
        return -1 if t.is_inference() else int(t._version)
    except Exception:
        return -1
