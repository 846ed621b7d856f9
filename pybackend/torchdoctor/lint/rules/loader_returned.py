"""TD017 through a function of the file that builds and returns the loader, with no order
option of its own to pass on: ``def _create_data_loader(img_path, ...): dataloader =
DataLoader(dataset, batch_size=...); return dataloader``, then ``dataloader =
_create_data_loader(train_path, ...)`` iterated by the training loop (2026-12-07, a fetched
object detector with ``shuffle=True`` removed from its loader factory). The callers decide: the
loader is a training one when a caller's loader is (named for training, or iterated by a loop
that computes gradients), judged as the rule judges a ``DataLoader`` assigned there."""

from __future__ import annotations

import ast
from typing import Callable, Set

from ..context import LintContext
from .loader_builders import built_by_factory


def returned_for_training(ctx: LintContext, call: ast.Call, training: Callable[[LintContext, ast.Call], bool]) -> bool:
    """Some caller of the local function that returns ``call``'s loader uses it for training."""
    func = ctx.enclosing_function(call)
    if func is None:
        return False
    seen: Set[ast.AST] = ctx.shared("loader_returned.seen", set)
    if func in seen:
        return False  # a factory asked again while its callers are judged (recursion)
    seen.add(func)
    try:
        return any(built_by_factory(ctx, site) is call and training(ctx, site) for site in ctx.call_sites(func))
    finally:
        seen.discard(func)
