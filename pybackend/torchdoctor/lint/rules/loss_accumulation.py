"""TD007: a loss tensor summed (or collected) across iterations without ``.item()``.

``total += loss`` keeps a reference to ``loss`` and, through it, to the autograd graph of
every batch: activations that should be freed each step stay alive, memory grows with the
epoch, and the run slows down or dies with an out-of-memory error many batches later.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from .. import torchapi
from ..context import LintContext
from ..fixes import replace_node
from ..model import WARNING, Fix
from ..registry import Reporter, rule
from ..training import analysis

# Wrapping a loss in one of these yields a number or a graph-free tensor.
_RELEASES = frozenset({"item", "detach", "tolist", "numpy", "cpu_item"})
_NUMBER_CALLS = frozenset({"float", "int", "round"})


@rule(
    "TD007",
    "loss-accumulated-with-graph",
    "A loss tensor is accumulated across iterations without .item() / .detach()",
    WARNING,
    """
`total_loss += loss` stores the loss **tensor**, and with it the autograd graph of that batch
(all its saved activations). Across an epoch nothing is freed: memory grows until the run slows
down or fails with out-of-memory far from the cause. Accumulate a number, `loss.item()`, or a
graph-free tensor, `loss.detach()`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for loop in ctx.loops:
        for node in ctx.own_nodes(loop, ast.AugAssign, ast.Assign, ast.Expr):
            if not _directly_in(ctx, node, loop):
                continue
            found = _accumulation(ctx, node)
            if found is None:
                continue
            acc, loss = found
            if not _defined_outside(ctx, acc, loop) or _backpropagated(ctx, acc, loop):
                continue
            if _under_no_grad(ctx, node):
                continue
            report.report(
                loss,
                f"`{ctx.text(acc)}` accumulates the loss tensor `{ctx.text(loss)}` across iterations: it keeps "
                f"every batch's autograd graph alive. Accumulate `{_release_text(ctx, loss, 'item')}` instead.",
                fix=_fix(ctx, acc, loss, loop),
            )


def _directly_in(ctx: LintContext, node: ast.AST, loop: ast.AST) -> bool:
    """``node`` belongs to ``loop`` itself, not to a loop nested inside it (reported there)."""
    loops = ctx.enclosing_loops(node)
    return bool(loops) and loops[0] is loop


def _accumulation(ctx: LintContext, node: ast.AST):
    """``(accumulator, loss expression)`` for ``acc += loss``, ``acc = acc + loss`` and
    ``acc_list.append(loss)``, where the added value holds a live loss tensor."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
        loss = _live_loss(ctx, node.value)
        return (node.target, loss) if loss is not None else None
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.op, ast.Add)
    ):
        acc = node.targets[0]
        left, right = node.value.left, node.value.right
        if isinstance(left, ast.Name) and left.id == acc.id:
            loss = _live_loss(ctx, right)
            return (acc, loss) if loss is not None else None
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "append"
        and isinstance(node.value.func.value, ast.Name)
        and len(node.value.args) == 1
    ):
        loss = _live_loss(ctx, node.value.args[0])
        return (node.value.func.value, loss) if loss is not None else None
    return None


def _live_loss(ctx: LintContext, expr: ast.AST) -> Optional[ast.AST]:
    """The part of ``expr`` that is a loss tensor still attached to its graph, if any."""
    if isinstance(expr, ast.BinOp):
        return _live_loss(ctx, expr.left) or _live_loss(ctx, expr.right)
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _RELEASES:
            return None
        if isinstance(expr.func, ast.Name) and expr.func.id in _NUMBER_CALLS:
            return None
        return expr if torchapi.is_loss_value(ctx, expr) else None
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr)
        if isinstance(value, ast.Call) and torchapi.is_loss_value(ctx, value):
            return expr
        if _is_backpropagated_name(ctx, expr):
            return expr
    return None


def _is_backpropagated_name(ctx: LintContext, name: ast.Name) -> bool:
    """A name that has ``.backward()`` called on it in the same function is a loss."""
    scope = ctx.scope_of(name)
    for call in analysis(ctx).backwards(scope):
        receiver = getattr(call.func, "value", None)
        if isinstance(receiver, ast.Name) and receiver.id == name.id:
            return True
    return False


def _defined_outside(ctx: LintContext, acc: ast.Name, loop: ast.AST) -> bool:
    """The accumulator was bound before the loop and is not reset inside it."""
    bindings = ctx.bindings.all_bindings(ctx.scope_of(loop), acc.id)
    start, end = (loop.lineno, loop.col_offset), (loop.end_lineno, loop.end_col_offset)
    before = [b for b in bindings if b.pos <= start]
    inside = [b for b in bindings if start < b.pos <= end and b.kind == "assign" and not _is_self_add(b.stmt, acc.id)]
    return bool(before) and not inside


def _is_self_add(stmt: ast.AST, name: str) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(value, ast.BinOp) and isinstance(value.left, ast.Name) and value.left.id == name


def _backpropagated(ctx: LintContext, acc: ast.Name, loop: ast.AST) -> bool:
    """``loss_sum.backward()`` (or backward of anything mentioning it) means the graph is wanted."""
    scope = ctx.scope_of(loop)
    for call in analysis(ctx).backwards(scope):
        for sub in ast.walk(call):
            if isinstance(sub, ast.Name) and sub.id == acc.id:
                return True
    return False


def _under_no_grad(ctx: LintContext, node: ast.AST) -> bool:
    return torchapi.grad_mode_at(ctx, node) == torchapi.NO_GRAD


def _release_text(ctx: LintContext, loss: ast.AST, method: str) -> str:
    text = ctx.text(loss)
    if not isinstance(loss, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"({text})"
    return f"{text}.{method}()"


def _fix(ctx: LintContext, acc: ast.Name, loss: ast.AST, loop: ast.AST) -> Optional[Fix]:
    """``.item()`` unless the accumulator is used as a tensor later (``total.item()``)."""
    method = "detach" if _used_as_tensor(ctx, acc, loop) else "item"
    return replace_node(ctx.source, loss, _release_text(ctx, loss, method), f"Accumulate `{_release_text(ctx, loss, method)}`")


def _used_as_tensor(ctx: LintContext, acc: ast.Name, loop: ast.AST) -> bool:
    """The accumulator is later used as a tensor: ``total.item()``, ``torch.stack(losses)``.
    A text search over the enclosing function is enough to choose between two safe fixes."""
    scope = ctx.scope_of(loop)
    text = ctx.source.text if scope is ctx.tree else ctx.text(scope)
    name = re.escape(acc.id)
    method = re.search(rf"\b{name}\.(?!append\b)\w+", text)
    stacked = re.search(rf"\.(stack|cat|sum|mean)\(\s*{name}\b", text)
    return bool(method or stacked)
