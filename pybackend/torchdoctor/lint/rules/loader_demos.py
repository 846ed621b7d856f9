"""TD017's loaders that nothing trains on: a training set's loader that a dataset file iterates
only to show its samples (``for imgs, labels in loader: plt.imshow(...)``), with no model and no
training step, or that is read only where gradients are off (an ``@torch.no_grad()`` test that
embeds the training graphs to fit a classifier on them), is not a training run and has no order
to shuffle."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple, Union

from .. import torchapi
from ..context import LintContext, terminal_name, walk
from ..sharded import name_index
from ..training import analysis

_DISPLAY = frozenset({"imshow", "show", "savefig", "save_image"})


def not_trained_on(ctx: LintContext, call: ast.Call, target: Optional[ast.expr]) -> bool:
    """The loader is only shown (:func:`only_looked_at`) or only read with gradients off."""
    return only_looked_at(ctx, call, target) or only_read_without_grad(ctx, call, target)


def only_read_without_grad(ctx: LintContext, call: ast.Call, target: Optional[ast.expr]) -> bool:
    """Every read of ``train_loader`` is under ``torch.no_grad()`` (a ``with`` or a decorated
    function): ``x, y = encode(train_loader)`` in an ``@torch.no_grad()`` ``test()`` scores
    the training set, it does not train on it (2026-12-07, a graph example's "evaluation
    loaders", named for the split they read)."""
    if not isinstance(target, ast.Name):
        return False
    reads = _reads_bound_by(ctx, ctx.scope_of(call), target.id, ctx.statement_of(call))
    return bool(reads) and all(torchapi.grad_mode_at(ctx, node) == torchapi.NO_GRAD for node in reads)


def only_looked_at(ctx: LintContext, call: ast.Call, target: Optional[ast.expr]) -> bool:
    """``train_loader = DataLoader(dst, batch_size=4)`` read only by loops that show its batches
    (``plt.imshow(imgs[j])``) and run no model, no backward and no step: a dataset file's demo
    of its samples, whatever the loader is named, not a training run. The loader must not
    leave the scope (passed to a call, returned, stored): a loop elsewhere could train on it."""
    if not isinstance(target, ast.Name):
        return False
    training = analysis(ctx)
    assigned = ctx.statement_of(call)
    loops: List[Union[ast.For, ast.AsyncFor]] = []
    # Not the reads bound elsewhere: another variable of the same name (a function's parameter).
    for node in _reads_bound_by(ctx, ctx.scope_of(call), target.id, assigned):
        loop = _loop_drawing_from(ctx, node)
        if loop is None:
            return False
        loops.append(loop)
    for loop in loops:
        calls = training.own_calls(loop)
        if training.backpropagates(loop) or training.steps(loop):
            return False
        if any(_runs_a_model(ctx, c) for c in calls):
            return False
        if not any(terminal_name(c.func) in _DISPLAY for c in calls):
            return False
    return bool(loops)


def _reads_bound_by(ctx: LintContext, scope: ast.AST, name: str, stmt: ast.AST) -> List[ast.Name]:
    """The reads of ``name`` anywhere in ``scope`` (nested functions too) whose binding is made
    by ``stmt``, or that have none. The scope is walked once and each name's reads grouped by
    binding once, not once per loader (a script building a loader in every block, each under
    the same name, was quadratic)."""
    cache: Dict[Tuple[ast.AST, str], Dict[Optional[ast.AST], List[ast.Name]]] = ctx.shared("loader_demos.bound", dict)
    groups = cache.get((scope, name))
    if groups is None:
        groups = cache[(scope, name)] = {}
        for node in _reads(ctx, scope).get(name, ()):
            bound = ctx.binding(node)
            groups.setdefault(bound.stmt if bound is not None else None, []).append(node)
    return groups.get(stmt, []) + groups.get(None, [])


def _reads(ctx: LintContext, scope: ast.AST) -> Dict[str, List[ast.Name]]:
    """Every name read anywhere in ``scope``, by name (one walk per scope)."""
    if scope is ctx.tree:
        return name_index(ctx).reads  # the same walk, shared with TD020
    cache: Dict[ast.AST, Dict[str, List[ast.Name]]] = ctx.shared("loader_demos.reads", dict)
    found = cache.get(scope)
    if found is None:
        found = cache[scope] = {}
        for node in walk(scope):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found.setdefault(node.id, []).append(node)
    return found


def _runs_a_model(ctx: LintContext, call: ast.Call) -> bool:
    """``model(x)``, or a model handed to a helper (``train_step(model, batch)``)."""
    called = [call.func, *call.args, *(k.value for k in call.keywords)]
    return any(isinstance(e, (ast.Name, ast.Attribute)) and torchapi.is_model(ctx, e) for e in called)


def _loop_drawing_from(ctx: LintContext, name: ast.Name) -> Optional[Union[ast.For, ast.AsyncFor]]:
    """The ``for`` loop whose iterable is ``name`` (``for b in enumerate(name)``), else None."""
    node: ast.AST = name
    parent = ctx.parents.get(node)
    while isinstance(parent, ast.Call) and terminal_name(parent.func) in torchapi.ITERABLE_WRAPPERS:
        node, parent = parent, ctx.parents.get(parent)
    if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node:
        return parent
    return None
