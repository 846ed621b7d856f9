"""TD017 through a project's loader factory: ``def get_loader(dataset, batch_size,
shuffle=False): return DataLoader(dataset, batch_size, shuffle=shuffle)``, called for the
training set without ``shuffle=True``. The ``DataLoader`` itself passes an order option, so it
is no finding; the call that takes the factory's default ``False`` for the training loader is
(the tutorials' ``train_loader = get_data_loader(train_data, 512, pad)``).

Only a call that leaves the argument out is judged (an explicit ``shuffle=False`` is the
documented way to keep the order), only when every ``return`` of the factory gives back such a
``DataLoader`` (none with a ``sampler``), and with the direct rule's exceptions read at the call:
an iterable or index-ignoring dataset passed in, a result read only as ``next(iter(...))``, a
``test_*`` function. Each factory's calls are judged once, however many loaders it returns."""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

from .. import torchapi
from ..bindings import Function
from ..context import LintContext
from ..fixes import add_keyword
from ..registry import Reporter
from .loader_demos import only_looked_at

# ``(function, parameter, its position among the positional parameters a call passes (self
# dropped for a method), whether it is positional-only, the parameter the dataset comes from)``
Factory = Tuple[Function, str, Optional[int], bool, Optional[str]]


def reported_through_factory(
    ctx: LintContext, call: ast.Call, report: Reporter, training: Callable[[LintContext, ast.Call], bool]
) -> bool:
    """Whether ``call`` is a factory's ``DataLoader(..., shuffle=<parameter>)`` (then its
    callers, not it, are what to judge); each caller that leaves the default ``False`` for a
    loader ``training`` says is a training one is reported, once per factory."""
    factory = _factory(ctx, call)
    if factory is None:
        return False
    done: Dict[ast.AST, bool] = ctx.shared("td017_factories_judged", dict)
    func, name, _, positional_only, _ = factory
    if func in done:
        return True  # another ``return DataLoader(...)`` of the same factory: judged already
    done[func] = True
    if not _returns_only_such_loaders(ctx, func, name) or _dataset_excepted(ctx, call):
        return True
    for site in _unshuffled_sites(ctx, factory):
        stmt = ctx.statement_of(site)
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if not training(ctx, site) or only_looked_at(ctx, site, target) or _excepted(ctx, site, factory):
            continue
        fix = None if positional_only else add_keyword(ctx.source, site, f"{name}=True", f"Pass `{name}=True`")
        report.report(
            site,
            f"`{func.name}()` builds this training loader with its default `{name}=False` (line "
            f"{call.lineno}): every epoch sees the samples in stored order.",
            fix=fix,
        )
    return True


def _factory(ctx: LintContext, call: ast.Call) -> Optional[Factory]:
    """The factory when ``call`` is ``DataLoader(..., shuffle=p)`` with no sampler, inside a
    function whose parameter ``p`` defaults to ``False``."""
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
    if ctx.enclosing_class(func) is not None and names and names[0] in ("self", "cls"):
        names = names[1:]  # ``self.make_loader(ds, True)`` passes ``ds`` first (as callers.py reads it)
    index = names.index(given.value.id) if given.value.id in names else None
    positional_only = any(a.arg == given.value.id for a in args.posonlyargs)
    dataset = call.args[0] if call.args else torchapi.keyword(call, "dataset")
    dataset = dataset.value if isinstance(dataset, ast.keyword) else dataset
    source = dataset.id if isinstance(dataset, ast.Name) and dataset.id in names else None
    return func, given.value.id, index, positional_only, source


def _returns_only_such_loaders(ctx: LintContext, func: Function, name: str) -> bool:
    """Every ``return`` of ``func`` gives back a ``DataLoader`` (built there or bound once to a
    name of ``func``) that shuffles by ``name`` and passes no sampler: a helper that builds a
    loader to compute statistics returns something else, and a branch with a ``sampler`` orders
    that loader itself."""
    returns = [r for r in ctx.own_nodes(func, ast.Return) if r.value is not None]
    if not returns:
        return False
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Name):
            bound = ctx.binding(value)
            if bound is None or bound.kind != "assign" or ctx.enclosing_function(bound.stmt) is not func:
                return False
            value = bound.value
        if not isinstance(value, ast.Call) or ctx.callee_class(value) != torchapi.DATALOADER:
            return False
        made = _factory(ctx, value)
        if made is None or made[0] is not func or made[1] != name:
            return False
    return True


def _argument(site: ast.Call, name: str, index: Optional[int]) -> Optional[ast.expr]:
    passed = next((k.value for k in site.keywords if k.arg == name), None)
    if passed is None and index is not None and index < len(site.args):
        passed = site.args[index]
    return passed


def _unshuffled_sites(ctx: LintContext, factory: Factory) -> List[ast.Call]:
    """The calls of the factory that leave the order argument out (an explicit ``False``, by
    keyword or position, is a deliberate order: the rule's documented way to stay quiet)."""
    func, name, index, _, _ = factory
    found = []
    for site in ctx.call_sites(func):
        if any(isinstance(a, ast.Starred) for a in site.args) or any(k.arg is None for k in site.keywords):
            continue
        if _argument(site, name, index) is None:
            found.append(site)
    return found


def _dataset_excepted(ctx: LintContext, call: ast.Call) -> bool:
    """The factory's own ``DataLoader(Stream(path), ...)`` reads an iterable (or
    index-ignoring) dataset built there."""
    from . import dataloader_shuffle as direct  # imports this module: not at the top

    dataset = call.args[0] if call.args else None
    if dataset is None or isinstance(dataset, ast.Name) and _is_param(ctx, dataset):
        return False  # what the callers pass: read at each call
    return direct._is_iterable_dataset(ctx, dataset) or direct._ignores_index(ctx, dataset)


def _is_param(ctx: LintContext, name: ast.Name) -> bool:
    bound = ctx.binding(name)
    return bound is not None and bound.kind == "param"


def _excepted(ctx: LintContext, site: ast.Call, factory: Factory) -> bool:
    """The direct rule's exceptions, read at the factory's call: a test function, a result only
    read as ``next(iter(...))``, an iterable (or index-ignoring) dataset passed in."""
    from . import dataloader_shuffle as direct  # imports this module: not at the top

    if direct._in_test_function(ctx, site) or direct._only_first_batch_taken(ctx, site):
        return True
    func, _, _, _, source = factory
    if source is None:
        return False
    names = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    if ctx.enclosing_class(func) is not None and names and names[0] in ("self", "cls"):
        names = names[1:]
    dataset = _argument(site, source, names.index(source) if source in names else None)
    return dataset is not None and (direct._is_iterable_dataset(ctx, dataset) or direct._ignores_index(ctx, dataset))
