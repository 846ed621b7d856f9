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


def handed_to_backward(ctx: LintContext, scope: ast.AST) -> Set[str]:
    """The names ``scope`` hands (alone, or divided or multiplied by something) to a function of
    this file that calls ``backward()`` on the parameter receiving them; found once per scope."""
    cache: Dict[ast.AST, Set[str]] = ctx.shared("loss_handoffs.names", dict)
    found = cache.get(scope)
    if found is None:
        found = cache[scope] = set()
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
                    found.add(name)
    return found


def _scaled_name(arg: ast.expr) -> Optional[str]:
    """``loss``, ``loss / accum``, ``loss * w`` -> ``"loss"``."""
    while isinstance(arg, ast.BinOp) and isinstance(arg.op, (ast.Div, ast.Mult)):
        arg = arg.left
    return arg.id if isinstance(arg, ast.Name) else None


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
