"""TD017 through a project's loader factory: ``def get_loader(dataset, batch_size,
shuffle=False): return DataLoader(dataset, batch_size, shuffle=shuffle)``, called for the
training set without ``shuffle=True``. The ``DataLoader`` itself passes an order option, so it
is no finding; the call that takes the factory's default ``False`` for the training loader is
(the tutorials' ``train_loader = get_data_loader(train_data, 512, pad)``)."""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Tuple

from .. import torchapi
from ..bindings import Function
from ..context import LintContext
from ..fixes import add_keyword
from ..registry import Reporter
from .loader_demos import only_looked_at

Factory = Tuple[Function, str, Optional[int]]


def reported_through_factory(
    ctx: LintContext, call: ast.Call, report: Reporter, training: Callable[[LintContext, ast.Call], bool]
) -> bool:
    """Whether ``call`` is a factory's ``DataLoader(..., shuffle=<parameter>)`` (then its
    callers, not it, are what to judge); each caller that leaves the default ``False`` for a
    loader ``training`` says is a training one is reported."""
    factory = _factory(ctx, call)
    if factory is None:
        return False
    func, name, _ = factory
    for site in _unshuffled_sites(ctx, factory):
        stmt = ctx.statement_of(site)
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if not training(ctx, site) or only_looked_at(ctx, site, target):
            continue
        report.report(
            site,
            f"`{func.name}()` builds this training loader with its default `{name}=False` (line "
            f"{call.lineno}): every epoch sees the samples in stored order.",
            fix=add_keyword(ctx.source, site, f"{name}=True", f"Pass `{name}=True`"),
        )
    return True


def _factory(ctx: LintContext, call: ast.Call) -> Optional[Factory]:
    """``(function, parameter, position)`` when ``call`` is ``DataLoader(..., shuffle=p)`` with no
    sampler, inside a function whose parameter ``p`` defaults to ``False``."""
    given = torchapi.keyword(call, "shuffle")
    if given is None or not isinstance(given.value, ast.Name) or len(call.args) >= 3:
        return None
    if any(k.arg in ("sampler", "batch_sampler") or k.arg is None for k in call.keywords):
        return None
    bound = ctx.binding(given.value)
    func = ctx.enclosing_function(call)
    if bound is None or bound.kind != "param" or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    default = defaults.get(given.value.id)
    if not (isinstance(default, ast.Constant) and default.value is False):
        return None
    names = [a.arg for a in positional]
    index = names.index(given.value.id) if given.value.id in names else None
    return func, given.value.id, index


def _unshuffled_sites(ctx: LintContext, factory: Factory) -> List[ast.Call]:
    """The calls of the factory that pass no order (or a literal ``False``)."""
    func, name, index = factory
    found = []
    for site in ctx.call_sites(func):
        if any(isinstance(a, ast.Starred) for a in site.args) or any(k.arg is None for k in site.keywords):
            continue
        passed = next((k.value for k in site.keywords if k.arg == name), None)
        if passed is None and index is not None and index < len(site.args):
            passed = site.args[index]
        if passed is None or (isinstance(passed, ast.Constant) and passed.value is False):
            found.append(site)
    return found
