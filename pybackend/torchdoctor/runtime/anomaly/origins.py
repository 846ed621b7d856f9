"""Where a NaN/Inf was made when a module's input already had it and no module before made any.

Then the value was made by plain code: either inside the ``forward`` of a module being called
(``att = q @ k.transpose(-2, -1)`` in an attention block, overflowing float16, before it called
its ``attn_dropout``), or outside every module (the data, the training loop). The stack knows
which modules are being called: each ``Module._call_impl`` frame's ``self``, innermost first. A
parent made the value when the arguments of its ``forward`` were finite; one whose arguments
already held NaN/Inf only passed it on, so the search goes outwards. Then the autograd graph
of the bad tensor names the op (:mod:`loss_forensics`'s rules, plus overflowing products), and
the parent's source names the line: the last statement before the child's call that does such
an op. Only runs once something is wrong: its cost is free.
"""

from __future__ import annotations

import ast
import inspect
import io
import linecache
import sys
import textwrap
import tokenize
from types import CodeType, FrameType
from typing import Any, Dict, List, Optional, Tuple

from .detect import checkable, extremes, iter_tensors
from .frames import is_internal, module_call_codes
from .loss_forensics import find_origin

Origin = Dict[str, Any]

MAX_ARGS = 16
# The largest finite value of each reduced-precision dtype: an overflow past it is an Inf.
LIMITS = {"float16": 65504.0, "bfloat16": 3.39e38}


def made_inside(start: Optional[FrameType], bad: List[Any]) -> Optional[Origin]:
    """The innermost module whose own ``forward`` code made ``bad`` (tensors holding NaN/Inf).

    ``{"module", "frame", "op", "line", "code", "dtype"}``, or None when no module being
    called made it (it came in through the outermost module's arguments).
    """
    for module, forward, caller, received in _calls(start):
        if forward is None or _arguments_bad(forward, received):
            continue  # it came in through this forward's arguments: look further out
        origin: Origin = {"module": module, "frame": caller}
        op = _graph_origin(bad)
        if op is not None:
            origin.update(op=op["op"], detail=op["detail"], node=op["node"], dtype=op.get("dtype"))
            line = find_line(caller, str(op["op"]))
            if line is not None:
                origin["line"], origin["code"] = line
        return origin
    return None


Call = Tuple[Any, Optional[FrameType], Optional[FrameType], Optional[List[Any]]]


def _calls(start: Optional[FrameType]) -> List[Call]:
    """``(module, its forward's frame, the innermost user frame inside it, the arguments it was
    called with)`` of each module being called, innermost first, skipping the first (the module
    whose hook is running)."""
    torch = sys.modules["torch"]
    codes = module_call_codes(torch)
    found: List[Call] = []
    user: List[FrameType] = []  # user frames since the last _call_impl, innermost first
    frame, skipped = start, False
    while frame is not None:
        if frame.f_code in codes:
            module = frame.f_locals.get("self")
            if isinstance(module, torch.nn.Module) and not (found and found[-1][0] is module):
                if not skipped:
                    skipped = True  # the hooked module itself
                    found.append((module, None, None, None))
                else:
                    found.append((module, user[-1] if user else None, user[0] if user else None, _received(frame)))
            user = []
        elif not is_internal(frame):
            user.append(frame)
        frame = frame.f_back
    return found[1:]


def _received(call: FrameType) -> Optional[List[Any]]:
    """What ``Module.__call__`` passed to ``forward``: its ``args`` and ``kwargs`` (after any
    pre-hook), None when that frame does not name them (another torch)."""
    try:
        local = call.f_locals
        if "args" not in local:
            return None
        return list(local.get("args") or ()) + list((local.get("kwargs") or {}).values())
    except Exception:  # noqa: BLE001 - odd arguments: read the forward's locals as before
        return None


def _arguments_bad(frame: FrameType, received: Optional[List[Any]] = None) -> bool:
    """Did the forward receive NaN/Inf? The values it was called with, else the first locals of its
    frame. Not the locals first: a forward that rebinds its argument (``x = (x - mean) / (std +
    eps)``, NaN on a constant input with eps=0) holds the NaN it made under the argument's name, and
    the search went outward to "it came from outside the modules" naming that ``x`` as the data."""
    if received is not None:
        values = received[:MAX_ARGS]
    else:
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
        try:
            values = [frame.f_locals.get(name) for name in code.co_varnames[:count] if name != "self"][:MAX_ARGS]
        except Exception:
            return False
    for t in iter_tensors(values):
        low, high = extremes(t)
        if not (low == low and high == high and abs(low) != float("inf") and abs(high) != float("inf")):
            return True
    return False


def _graph_origin(bad: List[Any]) -> Optional[Dict[str, Any]]:
    for t in bad:
        if getattr(t, "grad_fn", None) is not None:
            found = find_origin(t)
            if found is not None:
                return found
    return None


# op (as loss_forensics names it) -> what in the source does it
_CALLS = {
    "matrix product": ("matmul", "bmm", "mm", "einsum", "baddbmm", "addmm"),
    "product": ("mul",),
    "softmax": ("softmax", "log_softmax"),
    "division": ("div", "true_divide"),
    "power": ("pow",),
}
_BINOPS = {"matrix product": ast.MatMult, "product": ast.Mult, "division": ast.Div, "power": ast.Pow}


def made_by_own_code(module: Any, bad: Any) -> Optional[Origin]:
    """A module's output went bad from finite inputs, parameters and buffers while every child's
    output was finite: its own ``forward`` code made it (pygcn's GCN written with
    ``torch.log(F.softmax(x))``, an RMSNorm's ``rsqrt`` of a zero mean square). The autograd graph
    names the op; the line is the one statement of its ``forward`` doing it, or, when several do
    (``torch.log(p)`` and ``torch.log(p + 1e-9)``), all of them (``lines``): the graph does not say
    which, and the last one was named wrongly. None for torch's own layers (the layer is the op)
    and when the graph names nothing (no grad, or no known op)."""
    if type(module).__module__.startswith("torch."):
        return None
    op = _graph_origin([bad])
    if op is None:
        return None
    origin: Origin = {"module": module, "op": op["op"], "detail": op["detail"], "node": op["node"]}
    origin["dtype"] = op.get("dtype")
    code = getattr(getattr(type(module), "forward", None), "__code__", None)
    if isinstance(code, CodeType):
        lines = _lines_doing(code, str(op["op"]))
        if len(lines) == 1:
            origin["line"], origin["file"] = lines[0], code.co_filename
            origin["code"] = _without_comment(linecache.getline(code.co_filename, lines[0]).strip())
        elif lines:
            origin["lines"], origin["file"] = lines, code.co_filename
    return origin


def find_line(frame: Optional[FrameType], op: str) -> Optional[Tuple[int, str]]:
    """``(line, source)`` of the last statement before ``frame``'s current line doing ``op``."""
    if frame is None:
        return None
    return _last_doing(frame.f_code, op, frame.f_lineno)


def _last_doing(code: CodeType, op: str, before: Optional[int]) -> Optional[Tuple[int, str]]:
    """The last statement of ``code``'s function doing ``op`` (before line ``before``, if given)."""
    lines = [line for line in _lines_doing(code, op) if before is None or line < before]
    if not lines:
        return None
    return lines[-1], _without_comment(linecache.getline(code.co_filename, lines[-1]).strip())


def _lines_doing(code: CodeType, op: str) -> List[int]:
    """The lines of the simple statements of ``code``'s function doing ``op``, in order (a compound
    statement, ``if`` or ``for``, is not a line doing it: its body's statements are)."""
    tree = _function_tree(code)
    if tree is None:
        return []
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND) and _does(node, op):
            lines.add(node.lineno)
    return sorted(lines)


_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
)


def _without_comment(code: str) -> str:
    """The statement without a trailing ``# comment`` (the sentence quotes the code)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    for token in tokens:
        if token.type == tokenize.COMMENT:
            return code[: token.start[1]].rstrip()
    return code


def _function_tree(code: CodeType) -> Optional[ast.AST]:
    try:
        lines, first = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except Exception:
        return None
    shift = first - 1
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            node.lineno += shift  # type: ignore[attr-defined]
    body = tree.body[0] if isinstance(tree, ast.Module) and tree.body else tree
    return body


def _does(stmt: ast.stmt, op: str) -> bool:
    binop, calls = _BINOPS.get(op), _CALLS.get(op, (op,))
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not stmt:
            return False
        if binop is not None and isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, binop):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in calls:
                return True
    return False


def bad_inputs(inputs: Any) -> List[Any]:
    """The input tensors holding NaN/Inf."""
    out = []
    for t in iter_tensors(inputs):
        if checkable(t):
            low, high = extremes(t)
            if not (low == low and high == high and abs(low) != float("inf") and abs(high) != float("inf")):
                out.append(t)
    return out
