"""For TD014: loaders and ``collate_fn`` made by a function of the file. A tutorial's
``train_loader = get_data_loader(train_data, 512, pad_index, shuffle=True)`` returns the
``DataLoader`` it builds, and ``collate_fn = get_collate_fn(pad_index)`` returns the nested
``def collate_fn(batch)`` that pads the batch: what the loader and the collate function are is
read through those returns, one level deep."""

from __future__ import annotations

import ast
from typing import List, Optional

from ..bindings import Function
from ..context import LintContext


def built_by_factory(ctx: LintContext, built: Optional[ast.Call]) -> Optional[ast.Call]:
    """The call every ``return`` of the local function ``built`` runs gives back (a name bound
    once, in that function, to a call; or the call itself): ``DataLoader(...)`` for
    ``get_data_loader(...)``. None when ``built`` runs no function of this file or its returns
    differ."""
    func = ctx.local_function_called(built) if built is not None else None
    values = [_returned_value(ctx, func, ret.value) for ret in _returns(ctx, func)] if func is not None else []
    if not values or any(v is None or v is not values[0] for v in values):
        return None
    found = values[0]
    return found if isinstance(found, ast.Call) else None


def def_returned_by(ctx: LintContext, made: ast.expr) -> Optional[Function]:
    """The nested ``def`` that the local function called by ``made`` returns by name
    (``return collate_fn``, bound by ``def collate_fn(batch):`` inside it)."""
    func = ctx.local_function_called(made) if isinstance(made, ast.Call) else None
    returns = _returns(ctx, func) if func is not None else []
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Name):
        return None
    bound = ctx.binding(returns[0].value)
    stmt = bound.stmt if bound is not None and bound.kind == "def" else None
    return stmt if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _returns(ctx: LintContext, func: Optional[Function]) -> List[ast.Return]:
    return [r for r in ctx.own_nodes(func, ast.Return) if r.value is not None] if func is not None else []


def _returned_value(ctx: LintContext, func: Function, value: Optional[ast.expr]) -> Optional[ast.AST]:
    if isinstance(value, ast.Call):
        return value
    if not isinstance(value, ast.Name):
        return None
    bound = ctx.binding(value)
    if bound is None or bound.kind != "assign" or ctx.enclosing_function(bound.stmt) is not func:
        return None
    return bound.value if isinstance(bound.value, ast.Call) else None
