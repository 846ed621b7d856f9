"""TD017's optional samplers: ``sampler=train_sampler`` where ``train_sampler`` is a
``DistributedSampler`` in distributed runs and ``None`` otherwise. The idiom pairs it with
``shuffle=(train_sampler is None)``; without that, a single-process run (``sampler=None``) reads
the training set in stored order every epoch."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ..context import LintContext, terminal_name
from ..fixes import add_keyword
from ..flow import block_completes
from ..model import Fix

_ORDERING = ("shuffle", "sampler", "batch_sampler")


def sampler_only_sometimes(ctx: LintContext, call: ast.Call) -> Optional[Tuple[str, Optional[Fix]]]:
    """(message, fix) when the loader's only ordering option is ``sampler=name`` and ``name`` is
    ``None`` on some path (``else: train_sampler = None``, ``... if distributed else None``) and a
    sampler built by a call on the others; None otherwise."""
    order = [k for k in call.keywords if k.arg in _ORDERING]
    if len(call.args) >= 3 or len(order) != 1 or order[0].arg != "sampler":
        return None
    name = order[0].value
    if not isinstance(name, ast.Name):
        return None
    values: List[Optional[ast.expr]] = []
    scope = ctx.scope_of(name)
    for index, bound in enumerate(ctx.alternatives(name)):
        if index and ctx.scope_of(bound.stmt) is scope and _overwritten(ctx, bound.stmt, name.id, call):
            continue  # ``train_sampler = None`` then an if/else that sets it on both branches
        value = bound.value
        if isinstance(value, ast.IfExp):
            values += [value.body, value.orelse]
        else:
            values.append(value)
    nones = [v for v in values if isinstance(v, ast.Constant) and v.value is None]
    if not nones or len(nones) == len(values) or not all(isinstance(v, (ast.Call, ast.Constant)) for v in values):
        return None
    message = (
        f"`{ctx.text(call.func)}` for the training data takes `sampler={name.id}`, which is `None` on some paths "
        f"(line {nones[0].lineno}), and does not pass `shuffle`: there every epoch sees the samples in stored order "
        f"(the default is `shuffle=False`)."
    )
    code = f"shuffle=({name.id} is None)"
    return message, add_keyword(ctx.source, call, code, f"Pass `{code}`")


def _overwritten(ctx: LintContext, stmt: ast.AST, name: str, use: ast.AST) -> bool:
    """Whether every path from ``stmt`` to ``use`` binds ``name`` again: a statement after it
    (in its block, then in the blocks around it) that always binds the name, before the one
    that holds ``use``. When unsure (the rebinding is in a loop, or beside ``use``), it is."""
    holders = {id(anc) for anc in ctx.ancestors(use)}
    while True:
        parent = ctx.parents.get(stmt)
        place = _place_in_block(ctx, parent, stmt)
        if place is None:
            return True  # not a statement in a block: unsure
        block, at = place
        for index in range(at + 1, len(block)):  # no slice: a module's body is thousands long
            later = block[index]
            if later is use or id(later) in holders:
                return False
            if _always_binds(ctx, later, name):
                return True
        if parent is None or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            return True  # ``use`` is not after ``stmt`` in this scope: unsure
        stmt = parent


def _place_in_block(ctx: LintContext, parent: Optional[ast.AST], stmt: ast.AST) -> Optional[Tuple[List[ast.stmt], int]]:
    """The statement list of ``parent`` (body, else or finally) holding ``stmt``, and where. Each
    parent's lists are indexed once: a module-level sampler searched the module's body, as long
    as the script, once per loader."""
    if parent is None:
        return None
    cache: Dict[ast.AST, Dict[ast.AST, Tuple[List[ast.stmt], int]]] = ctx.shared("loader_samplers.places", dict)
    places = cache.get(parent)
    if places is None:
        places = cache[parent] = {}
        for field in ("finalbody", "orelse", "body"):  # the first field holding a statement wins
            block = getattr(parent, field, None)
            if isinstance(block, list):
                places.update((s, (block, i)) for i, s in enumerate(block))
    return places.get(stmt)


def _always_binds(ctx: LintContext, stmt: ast.stmt, name: str) -> bool:
    """Whether running ``stmt`` to its end surely binds ``name`` (a branch that leaves by
    ``return`` or ``raise`` does not reach what follows: it counts as binding)."""
    if isinstance(stmt, ast.Assign):
        return any(_names(target, name) for target in stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return stmt.value is not None and _names(stmt.target, name)
    if isinstance(stmt, ast.If):
        return _block_binds(ctx, stmt.body, name) and _block_binds(ctx, stmt.orelse, name)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return _block_binds(ctx, stmt.body, name)
    if isinstance(stmt, ast.Try):
        if _block_binds(ctx, stmt.finalbody, name):
            return True
        body = _block_binds(ctx, stmt.body, name) or _block_binds(ctx, stmt.orelse, name)
        return body and all(_block_binds(ctx, h.body, name) for h in stmt.handlers)
    return False


def _block_binds(ctx: LintContext, block: List[ast.stmt], name: str) -> bool:
    if not block:
        return False
    return any(_always_binds(ctx, s, name) for s in block) or not block_completes(ctx, block)


def _names(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_names(e, name) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _names(target.value, name)
    return False


# Opacus' PrivacyEngine: ``make_private(data_loader=loader, ...)`` hands back a loader of its own.
_PRIVATE = frozenset({"make_private", "make_private_with_epsilon"})


def resampled_privately(ctx: LintContext, call: ast.Call) -> bool:
    """The loader built by ``call`` is handed to Opacus' ``privacy_engine.make_private(...)``,
    which by default (``poisson_sampling=True``) replaces it with one drawing every batch by
    Poisson sampling, so the order it was built with is never used (opacus' FSDP example). Not when
    ``poisson_sampling=False`` (the loader is kept) nor when the call sits under an ``if`` the
    loader does not (``if not args.disable_dp:``: the other path trains on the loader as built)."""
    stmt = ctx.statement_of(call)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    return any(_resamples(ctx, site, name, call) for site in _private_calls(ctx))


def _private_calls(ctx: LintContext) -> List[ast.Call]:
    """Found once per file: scanning every call per loader was quadratic on long scripts."""
    return ctx.shared("td017_make_private", lambda: [c for c in ctx.calls if terminal_name(c.func) in _PRIVATE])


def _resamples(ctx: LintContext, site: ast.Call, name: str, loader: ast.Call) -> bool:
    given = {k.arg: k.value for k in site.keywords}
    passed = given.get("data_loader", site.args[2] if len(site.args) > 2 else None)
    if not (isinstance(passed, ast.Name) and passed.id == name):
        return False
    poisson = given.get("poisson_sampling")
    if isinstance(poisson, ast.Constant) and poisson.value is False:
        return False
    around = set(ctx.ancestors(loader))
    return not any(isinstance(a, ast.If) and a not in around for a in ctx.ancestors(site))
