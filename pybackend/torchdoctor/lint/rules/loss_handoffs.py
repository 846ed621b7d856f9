"""For TD007 (loss_accumulation.py only): a loss backpropagated by a helper it is handed.

``optimizer_step(loss / accum, optimizer, model)`` where the file's ``optimizer_step(_loss, ...)``
calls ``_loss.backward()``: ``loss`` is a loss as surely as if the loop called
``loss.backward()`` itself, so a meter or total fed ``loss`` keeps its graph.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from .. import torchapi
from ..context import LintContext
from ..training import analysis


def handed_to_backward(ctx: LintContext, scope: ast.AST) -> Dict[str, Set[int]]:
    """The names ``scope`` hands (alone, or divided or multiplied by something) to a function of
    this file that calls ``backward()`` on the parameter receiving them, each with the bindings
    (by ``id``) that may hold the value handed, or one it was scaled from: a later ``loss =
    loss.item()`` is another value. Found once per scope."""
    cache: Dict[ast.AST, Dict[str, Set[int]]] = ctx.shared("loss_handoffs.names", dict)
    found = cache.get(scope)
    if found is None:
        found = cache[scope] = {}
        training = analysis(ctx)
        for call in training.own_calls(scope):
            helper = ctx.local_function_called(call)
            if helper is None or not training.backwards(helper):
                continue
            params = [a.arg for a in helper.args.args]
            if ctx.enclosing_class(helper) is not None and isinstance(call.func, ast.Attribute):
                params = params[1:]  # ``self``
            differentiated = {
                s.id for b in training.backwards(helper) for s in backward_subjects(b) if isinstance(s, ast.Name)
            }
            passed = list(zip(params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
            for param, arg in passed:
                name = _scaled_name(arg)
                if name is not None and param in differentiated:
                    _add_family(ctx, name, found.setdefault(name.id, set()))
    return found


def holds_handed_value(ctx: LintContext, read: ast.Name) -> bool:
    """Whether some binding that may reach ``read`` holds a value its scope hands to a
    backpropagating helper (``optimizer_step(loss, opt)``; not after ``loss = loss.item()``)."""
    family = handed_to_backward(ctx, ctx.scope_of(read)).get(read.id, set())
    return bool(family) and any(id(bound) in family for bound in ctx.alternatives(read))


def _add_family(ctx: LintContext, handed: ast.Name, family: Set[int]) -> None:
    """Into ``family``: the bindings that may reach ``handed``, and those they were made from by
    arithmetic on the same name (``loss = loss / accum``; ``loss += aux`` adds in place), three
    steps back at most. Each binding is followed once per name."""
    todo = [(handed, 0)]
    while todo:
        name, depth = todo.pop()
        for bound in ctx.alternatives(name):
            if id(bound) in family:
                continue
            family.add(id(bound))
            if depth >= 3:
                continue
            stmt = bound.stmt
            if bound.kind == "aug" and isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                todo.append((stmt.target, depth + 1))  # the value before ``loss += aux``
            elif bound.kind == "assign" and isinstance(bound.value, (ast.BinOp, ast.UnaryOp)):
                todo += [(n, depth + 1) for n in _operands(bound.value) if n.id == handed.id]


def _scaled_name(arg: ast.expr) -> Optional[ast.Name]:
    """``loss``, ``loss / accum``, ``loss * w`` -> ``loss``."""
    while isinstance(arg, ast.BinOp) and isinstance(arg.op, (ast.Div, ast.Mult)):
        arg = arg.left
    return arg if isinstance(arg, ast.Name) else None


def _operands(expr: ast.expr) -> List[ast.Name]:
    """The names combined by arithmetic in ``expr`` (``loss`` in ``loss / accum + aux``)."""
    if isinstance(expr, ast.BinOp):
        return _operands(expr.left) + _operands(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _operands(expr.operand)
    return [expr] if isinstance(expr, ast.Name) else []


def backward_subjects(call: ast.Call) -> List[ast.expr]:
    """What a backward call differentiates: ``loss`` in ``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``, ``self.manual_backward(loss)``,
    ``torch.autograd.backward(loss)``. (A tensor's own ``backward(gradient)`` argument is listed
    too; it does no harm.)"""
    func = call.func
    subjects: List[ast.expr] = list(call.args[:1])
    if isinstance(func, ast.Attribute) and func.attr == "backward":
        subjects.append(torchapi.unscaled(func.value))
    return subjects
