"""Models whose parameters the file freezes (in part): linear probing and frozen-backbone
fine-tuning put them in eval mode on purpose.

The linear-probe protocol (MoCo, SimSiam, DINO ``main_lincls.py``) freezes the backbone with
``p.requires_grad = False``, optimizes only the head, and calls ``model.eval()`` before training
so that batch-norm statistics of the frozen features never move. TD010 must not call that eval
"sticky": it is the point. A model counts as frozen when the file does, to it or to a part of it
(``model``, ``model.backbone``, ``model.module.encoder``):

- ``for p in model.parameters(): p.requires_grad = False`` (also ``named_parameters()``, with
  the assignment under an ``if``), or
- ``model.requires_grad_(False)``.

A model the file runs only under ``torch.no_grad()`` (a distillation teacher:
``teacher.eval()``, then ``with torch.no_grad(): soft = teacher(x)`` in the loop) gets no
gradient either: its eval mode is the point too.
"""

from __future__ import annotations

import ast
from typing import Optional, Set

from .. import torchapi
from ..context import LintContext, receiver

_PARAMETER_LISTS = ("parameters", "named_parameters")


def deliberately_frozen(ctx: LintContext, model: Optional[ast.expr]) -> bool:
    """``model`` (or a part of it, or an object it is part of) has parameters frozen in this file."""
    if model is None:
        return False
    label = ctx.text(model)
    return any(_related(label, frozen) for frozen in _frozen(ctx)) or _run_only_without_grad(ctx, label)


def _run_only_without_grad(ctx: LintContext, label: str) -> bool:
    """Every call of the model spelled ``label`` in the file (at least one) is under ``no_grad``."""
    runs = [c for c in ctx.calls_named(label.rsplit(".", 1)[-1]) if ctx.text(c.func) == label]
    return bool(runs) and all(torchapi.grad_mode_at(ctx, c) == torchapi.NO_GRAD for c in runs)


def _related(label: str, frozen: str) -> bool:
    """``model`` and ``model.backbone`` or ``model[0]``: one is the other or contains it."""
    return label == frozen or _part_of(frozen, label) or _part_of(label, frozen)


def _part_of(part: str, whole: str) -> bool:
    return part.startswith(whole) and part[len(whole) : len(whole) + 1] in (".", "[")


def _frozen(ctx: LintContext) -> Set[str]:
    """The texts of the objects whose parameters the file freezes (found once per file)."""

    def collect() -> Set[str]:
        found: Set[str] = set()
        for call in ctx.calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and _false(call.args[:1]):
                found.add(ctx.text(receiver(call)))
        for node in ctx.all_nodes(ast.Assign):
            owner = _frozen_through_loop(ctx, node)
            if owner is not None:
                found.add(owner)
        return found

    return ctx.shared("frozen_models", collect)


def _false(args: list) -> bool:
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value is False


def _frozen_through_loop(ctx: LintContext, node: ast.Assign) -> Optional[str]:
    """``p.requires_grad = False`` inside ``for [name,] p in X.parameters()``: the text of ``X``."""
    target = node.targets[0] if len(node.targets) == 1 else None
    if not (
        isinstance(target, ast.Attribute)
        and target.attr == "requires_grad"
        and isinstance(target.value, ast.Name)
        and _false([node.value])
    ):
        return None
    name = target.value.id
    for loop in ctx.enclosing_loops(node):
        if isinstance(loop, (ast.For, ast.AsyncFor)) and name in _loop_names(loop.target):
            source = loop.iter
            if (
                isinstance(source, ast.Call)
                and isinstance(source.func, ast.Attribute)
                and source.func.attr in _PARAMETER_LISTS
            ):
                return ctx.text(receiver(source))
            return None
    return None


def _loop_names(target: ast.expr) -> Set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for e in target.elts for n in _loop_names(e)}
    return set()
