"""For TD007 (loss_accumulation.py only): a running-average meter fed the loss tensor.

``losses.update(loss, images.size(0))`` where ``losses = AverageMeter()`` and the meter's
``update(self, val, n=1)`` does ``self.sum += val * n``: the meter's sum is the loss tensor
plus every later one, and keeps each batch's graph alive, exactly as ``total += loss`` does.
Only meters whose class the project defines are followed: their ``update`` must add its first
argument itself into an attribute (``self.sum += val * n``: arithmetic only) and never let go of
its graph (``.item()``, ``float(...)``, ``.detach()``, ``.data``); a meter we cannot read, one that
converts, or one that passes the value through any other call (``to_number(val)``, whatever it
does) is no accumulator.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..context import LintContext, terminal_name

_CONVERTS = frozenset({"item", "float", "int", "detach", "tolist", "numpy", "round"})


def fed_meter(ctx: LintContext, node: ast.AST) -> Optional[ast.Call]:
    """The ``meter.update(value, ...)`` call of the statement ``node`` when ``meter`` (a name or
    ``self.attr``) is an object of a project class whose ``update`` sums its first argument."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"):
        return None
    holder = call.func.value
    if not call.args or not isinstance(holder, (ast.Name, ast.Attribute)):
        return None
    cls = ctx.local_class(ctx.class_of(holder))
    if cls is None:
        return call if _library_meter(ctx, holder) else None
    return call if _sums_first_argument(ctx, cls) else None


# Library meters whose ``update(val, n=1)`` does ``self.sum += val * n`` with no conversion.
_SUMMING_METERS = frozenset({"timm.utils.AverageMeter", "timm.utils.metrics.AverageMeter"})


def _library_meter(ctx: LintContext, holder: ast.expr) -> bool:
    """``losses_m = AverageMeter()`` imported from timm, by name or through ``from timm.utils
    import *`` (timm's training script, copied by many projects)."""
    if ctx.class_of(holder) in _SUMMING_METERS:
        return True
    built = ctx.construction_of(holder)
    return (
        built is not None
        and isinstance(built.func, ast.Name)
        and built.func.id == "AverageMeter"
        and ctx.binding(built.func) is None
        and _star_imports_timm_utils(ctx)
    )


def _star_imports_timm_utils(ctx: LintContext) -> bool:
    def collect() -> bool:
        return any(
            isinstance(node, ast.ImportFrom)
            and node.module in ("timm.utils", "timm.utils.metrics")
            and any(a.name == "*" for a in node.names)
            for node in ctx.tree.body
        )

    return ctx.shared("loss_meters.star_timm_utils", collect)


def _sums_first_argument(ctx: LintContext, cls: ast.ClassDef) -> bool:
    cache = ctx.shared("loss_meters.sums", dict)
    if cls not in cache:
        update = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "update"), None)
        cache[cls] = update is not None and _sums(update)
    return cache[cls]


def _sums(update: ast.FunctionDef) -> bool:
    """Whether ``update`` adds its first argument itself, still a tensor with its graph, into an
    attribute: ``self.sum += val * n``. Only arithmetic keeps the tensor; ``.data``,
    ``.detach()``, ``.item()``, ``float()``, ``.tolist()``, ``.cpu().numpy()`` let go of the graph,
    and what any other call returns (``to_number(val)``) is not known, so it is not reported; nor
    is a meter that rebinds the argument (``val = val.item()``) or converts it anywhere."""
    params = [a.arg for a in update.args.args][1:]
    if not params:
        return False
    value = params[0]
    added = False
    for node in ast.walk(update):
        if _releases(node) and _mentions(node, value):
            return False  # ``self.sum += val.item() * n``: a number
        if isinstance(node, ast.Name) and node.id == value and not isinstance(node.ctx, ast.Load):
            return False  # ``val = to_number(val)``: whatever it is now, not known to be the tensor
        if (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, ast.Add)
            and isinstance(node.target, ast.Attribute)
            and _carries(node.value, value)
        ):
            added = True
    return added


def _releases(node: ast.AST) -> bool:
    """``x.item()``, ``float(x)``, ``x.detach()``, ``x.data``...: a number or a tensor without a graph."""
    if isinstance(node, ast.Attribute):
        return node.attr == "data"
    return isinstance(node, ast.Call) and terminal_name(node.func) in _CONVERTS


def _carries(expr: ast.expr, name: str) -> bool:
    """Whether ``expr`` is ``name`` itself through arithmetic only (``val * n``, ``-val / 2``):
    a call, an attribute, a subscript in the way makes the value unknown."""
    pending = [expr]  # a list, not recursion: ``a + b + ... + z`` nests one level per term
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and node.id == name:
            return True
        if isinstance(node, ast.BinOp):
            pending += [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            pending.append(node.operand)
    return False


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
