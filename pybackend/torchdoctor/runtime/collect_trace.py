"""The forward trace: every module call of the most recent pass, as it happens.

Two global hooks feed a :class:`Tracer`: a forward pre-hook opens a :class:`Call` (inputs noted,
"started") and a forward hook registered with ``always_call=True`` closes it, either normally
(outputs noted, the first output tensor kept for statistics at snapshot time) or, when torch
calls it from its exception path, as failed with the exception's type and message. A call
whose forward raised is "failed"; the enclosing calls the exception went through are
"propagated"; calls still open when the program is paused are "running".

A pass is everything from a call made with no module call open on this thread (a root call) to
its return. Each root keeps only its latest pass (at most :data:`MAX_ROOTS` roots, the least
recently used dropped), so memory holds one pass per root: call notes (bounded by
:data:`MAX_CALLS`) and the kept outputs (bounded by a byte budget shared by all passes; an
output over budget keeps its shape but gets no statistics). The snapshot picks the outermost
root with the most parameters (see :mod:`snapshot`).

Cost per module call: two Python hooks noting references to torch's shape/dtype/device objects;
no tensor op, no host sync, no allocation on the device. Calls made while torch compiles or
inside a backward (activation checkpointing recomputes forwards there) are not traced.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any, Dict, List, Optional

from .collect_tensors import first_tensor, keepable, leaves, nbytes

MAX_CALLS = 4096  # per pass; further calls are counted, not noted
MAX_ROOTS = 8
DEFAULT_KEEP_BYTES = 256 << 20  # outputs kept for snapshot-time statistics, all passes together

OK = "ok"
RUNNING = "running"
FAILED = "failed"
PROPAGATED = "propagated"


class Call:
    """One module call. ``out_ref`` holds the first output tensor (or None) while the pass lives."""

    __slots__ = ("index", "module", "parent", "depth", "inputs", "outputs", "status", "out_ref",
                 "out_version", "out_note", "error_type", "error_message", "in_ref", "in_version")

    def __init__(self, index: int, module_ref: Any, parent: int, depth: int, inputs: list) -> None:
        self.index = index
        self.module = module_ref  # weakref.ref to the nn.Module
        self.parent = parent  # index of the enclosing call, -1 for the root call
        self.depth = depth
        self.inputs = inputs
        self.outputs: Optional[list] = None
        self.status = RUNNING
        self.out_ref: Any = None
        self.out_version = -1
        self.out_note: Optional[str] = None  # why there are no statistics, when there are none
        self.error_type: Optional[str] = None
        self.error_message: Optional[str] = None
        self.in_ref: Any = None  # root call only: the first input tensor (the batch)
        self.in_version = -1


class Pass:
    """The latest forward of one root module."""

    __slots__ = ("root", "number", "calls", "dropped", "kept_bytes", "failed", "grad_enabled", "__weakref__")

    def __init__(self, root_ref: Any, number: int, grad_enabled: bool) -> None:
        self.root = root_ref
        self.number = number  # passes of this root seen so far (1 = the first)
        self.calls: List[Call] = []
        self.dropped = 0  # calls past MAX_CALLS
        self.kept_bytes = 0
        self.failed = False
        self.grad_enabled = grad_enabled

    @property
    def complete(self) -> bool:
        return bool(self.calls) and self.calls[0].status == OK


class Tracer:
    def __init__(self, torch: Any, keep_bytes: int = DEFAULT_KEEP_BYTES, on_pass_end: Any = None) -> None:
        self._tensor = torch.Tensor
        self._grad_enabled = torch.is_grad_enabled
        compiler = getattr(torch, "compiler", None)
        self._compiling = getattr(compiler, "is_compiling", None) or (lambda: False)
        self._graph_task = getattr(torch._C, "_current_graph_task_id", None) or (lambda: -1)
        self.keep_bytes = keep_bytes
        self.on_pass_end = on_pass_end  # callable(pass, root module, output) after a root call returns
        self._tls = threading.local()
        self._lock = threading.Lock()
        self.passes: Dict[int, Pass] = {}  # id(root) -> its latest pass, least recently used first
        self.counts: Dict[int, int] = {}  # id(root) -> passes seen
        self.kept_bytes = 0
        self.clock = 0  # passes started, all roots
        self.errors: List[str] = []

    # -- hooks (hot path) ---------------------------------------------------------------------

    def pre(self, module: Any, args: Any) -> None:
        try:
            if self._compiling() or self._graph_task() != -1:
                return
            stack = getattr(self._tls, "stack", None)
            if stack is None:
                stack = self._tls.stack = []
            if stack and stack[0][1].module() is module:
                stack.clear()  # a root that never returned (KeyboardInterrupt...): start afresh
            if not stack:
                current = self._start(module)
            else:
                current = stack[-1][0]
            calls = current.calls
            if len(calls) >= MAX_CALLS:
                current.dropped += 1
                stack.append((current, None))
                return
            parent = stack[-1][1] if stack else None
            call = Call(len(calls), weakref.ref(module), parent.index if parent is not None else -1,
                        len(stack), leaves(args, self._tensor))
            if not stack:
                self._keep_input(current, call, args)
            calls.append(call)
            stack.append((current, call))
        except Exception as exc:
            self._error(exc)

    def post(self, module: Any, args: Any, output: Any) -> None:
        try:
            stack = getattr(self._tls, "stack", None)
            if not stack:
                return
            at = len(stack) - 1
            while at >= 0 and stack[at][1] is not None and stack[at][1].module() is not module:
                at -= 1  # calls above this one never closed (another hook raised): drop them
            if at < 0:
                return
            current, call = stack[at]
            del stack[at:]
            if call is not None:
                if output is None and self._raised_here():
                    self._close_failed(current, call)
                else:
                    self._close(current, call, output)
            if not stack and self.on_pass_end is not None and call is not None and call.status == OK:
                self.on_pass_end(current, module, output)
        except Exception as exc:
            self._error(exc)

    # -- helpers ------------------------------------------------------------------------------

    def _start(self, root: Any) -> Pass:
        key = id(root)
        with self._lock:
            old = self.passes.pop(key, None)
            if old is not None:
                self._release(old)
            self.clock += 1
            number = self.counts.get(key, 0) + 1
            self.counts[key] = number
            new = Pass(weakref.ref(root), number, bool(self._grad_enabled()))
            self.passes[key] = new
            self._trim()
        return new

    def _trim(self) -> None:
        """Drop passes of roots that are gone, then the least recently used beyond MAX_ROOTS."""
        for key in [k for k, p in self.passes.items() if p.root() is None]:
            self._release(self.passes.pop(key))
            self.counts.pop(key, None)
        while len(self.passes) > MAX_ROOTS:
            key = next(iter(self.passes))
            self._release(self.passes.pop(key))

    def _release(self, old: Pass) -> None:
        self.kept_bytes -= old.kept_bytes
        old.kept_bytes = 0
        for call in old.calls:
            call.out_ref = None
            call.in_ref = None

    def _keep(self, current: Pass, t: Any) -> Optional[str]:
        """Keep ``t`` for snapshot-time statistics if the budget allows; else why not."""
        if not keepable(t):
            return "no statistics for this kind of tensor"
        size = nbytes(t)
        with self._lock:
            if self.kept_bytes + size > self.keep_bytes:
                return f"not kept: over the {self.keep_bytes >> 20} MiB budget for kept outputs (TORCHDOCTOR_COLLECT_KEEP_MB)"
            self.kept_bytes += size
            current.kept_bytes += size
        return None

    def _keep_input(self, current: Pass, call: Call, args: Any) -> None:
        t = first_tensor(args, self._tensor)
        if t is not None and self._keep(current, t) is None:
            call.in_ref = t.detach()
            call.in_version = _version(t)

    def _close(self, current: Pass, call: Call, output: Any) -> None:
        call.outputs = leaves(output, self._tensor)
        call.status = OK
        t = output if isinstance(output, self._tensor) else first_tensor(output, self._tensor)
        if t is None:
            return
        note = self._keep(current, t)
        if note is None:
            call.out_ref = t.detach()  # same storage and version counter, no graph kept alive
            call.out_version = _version(t)
        else:
            call.out_note = note

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
        if exc is None:
            return False
        tb = exc.__traceback__
        if tb is None:
            return False
        frame = sys._getframe(2)  # post <- hook caller (torch's _call_impl), maybe one wrapper more
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

    def live_passes(self) -> List[Pass]:
        with self._lock:
            return [p for p in self.passes.values() if p.root() is not None]


def _version(t: Any) -> int:
    try:
        return -1 if t.is_inference() else int(t._version)
    except Exception:
        return -1
