"""TD017: the training DataLoader is never shuffled.

``DataLoader`` defaults to ``shuffle=False``. Data stored sorted (by class, by file, by date)
then arrives in the same order every epoch: batches are dominated by one class at a time and
the model chases whatever it saw last. It still trains, just worse; users have reported this
bug in many projects (see docs/rules.md for links).

A loader is a training loader when it is named for training (``train_loader``, built from
``train_ds``) or, whatever its name, when a loop that computes gradients iterates it. Options
passed through ``**train_kwargs`` are read from the dict literal and its ``.update({...})``
calls; one that adds ``shuffle`` only under an ``if`` (pytorch/examples' ``if use_accel:``) is
reported as shuffling only on that branch. Test files, ``test_*`` functions and one-batch
``Subset`` fixtures are not training loaders.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePath
from typing import Dict, List, Optional, Set, Tuple, Union

from .. import torchapi
from ..bindings import Function
from ..context import LintContext, terminal_name
from ..fixes import add_dict_entry, add_keyword
from ..model import WARNING, Fix
from ..registry import Reporter, rule
from ..training import analysis
from . import loader_order
from .loader_demos import not_trained_on
from .loader_factories import reported_through_factory
from .loader_returned import returned_for_training
from .loader_samplers import resampled_privately, sampler_only_sometimes

_TRAIN = re.compile(r"train", re.IGNORECASE)
_NOT_TRAIN = re.compile(r"val|test|eval|dev|holdout|predict|infer", re.IGNORECASE)
_ORDER_KWARGS = frozenset({"shuffle", "sampler", "batch_sampler"})
_TEST_DIRS = frozenset({"test", "tests", "testing"})


@rule(
    "TD017",
    "train-loader-not-shuffled",
    "Training DataLoader created without shuffle=True",
    WARNING,
    """
`DataLoader(...)` does **not** shuffle unless asked. A training set stored in order (sorted by
class, by source file, by time) is then fed in that order every epoch: consecutive batches are
dominated by one class, gradients swing between them, and the model converges worse or to the
classes seen last. Pass `shuffle=True` for the training loader (or a `sampler`). If the order
is intentional (time series, curriculum), write `shuffle=False` explicitly and the rule stays
quiet.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    if is_test_file(ctx.path):
        return
    for call in ctx.calls_of_class([torchapi.DATALOADER]):
        if reported_through_factory(ctx, call, report, _is_training_loader):
            continue  # ``DataLoader(..., shuffle=shuffle)`` in ``def get_loader(..., shuffle=False)``
        sometimes = None  # ``sampler=train_sampler``, None outside distributed runs (loader_samplers.py)
        if any(k.arg in _ORDER_KWARGS for k in call.keywords) or len(call.args) >= 3:
            sometimes = sampler_only_sometimes(ctx, call)
            if sometimes is None:
                continue
        options = _star_options(ctx, call)
        if options is None:
            continue  # ``**kwargs`` we cannot read: it may well shuffle
        always, branch, literal = options
        if always:
            continue
        if not _is_training_loader(ctx, call) or _in_test_function(ctx, call) or resampled_privately(ctx, call):
            continue
        if call.args and (
            _is_iterable_dataset(ctx, call.args[0]) or _ignores_index(ctx, call.args[0]) or _is_one_batch(ctx, call)
        ):
            continue
        if _only_first_batch_taken(ctx, call) or not_trained_on(ctx, call, _assigned_target(ctx, call)):
            continue
        message, severity = (sometimes[0], None) if sometimes else loader_order.message(ctx, call, branch)
        report.report(call, message, fix=sometimes[1] if sometimes else _fix(ctx, call, literal), severity=severity)


def is_test_file(path: Optional[str]) -> bool:
    """``test_*.py``, ``*_test.py``, ``conftest.py``, or a file at most three folders below a
    ``tests/`` folder: fixtures, not training runs. (Only the nearest folders count: a whole
    project checked out under some ``~/tests/`` directory is still linted.)"""
    if not path:
        return False
    parts = PurePath(path.replace("\\", "/")).parts
    name = parts[-1] if parts else ""
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(part.lower() in _TEST_DIRS for part in parts[-4:-1])


def _in_test_function(ctx: LintContext, call: ast.Call) -> bool:
    """Inside a ``test_*`` function of a file that imports pytest or unittest."""
    func = ctx.enclosing_function(call)
    while func is not None:
        if func.name.startswith("test_") and _imports_test_framework(ctx):
            return True
        func = ctx.enclosing_function(func)
    return False


def _imports_test_framework(ctx: LintContext) -> bool:
    return any(v.split(".")[0] in ("pytest", "unittest") for v in ctx.imports.aliases.values())


# -- is it for training? ------------------------------------------------------------------


def _is_training_loader(ctx: LintContext, call: ast.Call) -> bool:
    target = _assigned_target(ctx, call)
    names = [terminal_name(target)] if target is not None else []
    if call.args:
        names.append(terminal_name(call.args[0]) or ctx.text(call.args[0]))
    names = [n for n in names if n]
    if any(_NOT_TRAIN.search(n) for n in names):
        return False  # ``val_loader = DataLoader(train_ds)`` is an evaluation loader
    if any(_TRAIN.search(n) for n in names):
        return True
    return (
        target is not None
        and _iterated_by_training_loop(ctx, target)
        or returned_for_training(ctx, call, _is_training_loader)
    )


def _assigned_target(ctx: LintContext, call: ast.Call) -> Optional[ast.expr]:
    stmt = ctx.statement_of(call)
    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, (ast.Name, ast.Attribute)):
            return target
    return None


def _iterated_by_training_loop(ctx: LintContext, target: ast.expr) -> bool:
    """A loop that computes gradients iterates the loader: here, through ``self.loader`` in a
    method, or in a function of this file the loader is passed to (``train(model, loader)``)."""
    training = analysis(ctx)
    # Only the loops over something spelled like ``target`` and the calls passing a name like it
    # can match (indexes built once: scanning every loop and call per loader was quadratic).
    spelled = (False, target.id) if isinstance(target, ast.Name) else (True, ctx.text(target))
    for loop in _loops_by_iterable(ctx).get(spelled, ()):
        if not any(_same_object(ctx, it, target) for it in _iterated(loop.iter)):
            continue
        if training.backwards(loop) or training._calls_local(loop, lambda f: bool(training.backwards(f))):
            return True
    if isinstance(target, ast.Name):
        for site in _sites_by_argument(ctx).get(target.id, ()):
            func = ctx.local_function_called(site)
            if func is None:
                continue
            param = _parameter_receiving(site, func, target.id)
            if param is None:
                continue
            for loop in _loops_in(ctx, func):
                it = torchapi.unwrap_iterable(ctx, loop.iter)
                if isinstance(it, ast.Name) and it.id == param and training.backwards(loop):
                    return True
    return False


def _loops_by_iterable(ctx: LintContext) -> Dict[Tuple[bool, str], List[Union[ast.For, ast.AsyncFor]]]:
    """``for`` loops by what they iterate (unwrapped from ``enumerate`` etc.): ``(False, name)``
    for a name, ``(True, text)`` for an attribute chain, in source order; found once."""

    def build() -> Dict[Tuple[bool, str], List[Union[ast.For, ast.AsyncFor]]]:
        found: Dict[Tuple[bool, str], List[Union[ast.For, ast.AsyncFor]]] = {}
        for loop in ctx.loops:
            if not isinstance(loop, (ast.For, ast.AsyncFor)):
                continue
            for it in _iterated(loop.iter):
                if isinstance(it, ast.Name):
                    found.setdefault((False, it.id), []).append(loop)
                elif isinstance(it, ast.Attribute):
                    found.setdefault((True, ctx.text(it)), []).append(loop)
        return found

    return ctx.shared("td017_loops_by_iterable", build)


def _iterated(expr: ast.expr) -> List[ast.expr]:
    """What a ``for`` loop draws from: ``enumerate(loader)`` -> ``[loader]``, and every loader of a
    ``zip`` (a GAN's ``zip(loader_a, loader_b)``, two domains at once)."""
    if isinstance(expr, ast.Call) and expr.args:
        name = terminal_name(expr.func)
        if name == "zip":
            return [it for arg in expr.args for it in _iterated(arg)]
        if name in torchapi.ITERABLE_WRAPPERS:
            return _iterated(expr.args[0])
    return [expr]


def _sites_by_argument(ctx: LintContext) -> Dict[str, List[ast.Call]]:
    """The calls passing a name as an argument or keyword value, by that name, in file order."""

    def build() -> Dict[str, List[ast.Call]]:
        found: Dict[str, List[ast.Call]] = {}
        for site in ctx.calls:
            passed = {a.id for a in site.args if isinstance(a, ast.Name)}
            passed.update(k.value.id for k in site.keywords if isinstance(k.value, ast.Name))
            for name in passed:
                found.setdefault(name, []).append(site)
        return found

    return ctx.shared("td017_sites_by_argument", build)


def _loops_in(ctx: LintContext, func: Function) -> List[Union[ast.For, ast.AsyncFor]]:
    cache: Dict[ast.AST, List[Union[ast.For, ast.AsyncFor]]] = ctx.shared("td017_loops_in", dict)
    found = cache.get(func)
    if found is None:  # once per function: each site calling it asked again
        start, end = (func.lineno, func.col_offset), (func.end_lineno, func.end_col_offset)
        found = cache[func] = [
            loop
            for loop in ctx.loops
            if isinstance(loop, (ast.For, ast.AsyncFor)) and start < (loop.lineno, loop.col_offset) < end
        ]
    return found


def _same_object(ctx: LintContext, expr: ast.AST, target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        if not isinstance(expr, ast.Name) or expr.id != target.id:
            return False
        bound = ctx.binding(expr)
        return bound is not None and isinstance(bound.stmt, ast.Assign) and target in bound.stmt.targets
    if isinstance(target, ast.Attribute) and isinstance(expr, ast.Attribute):
        return ctx.text(expr) == ctx.text(target) and _class_of_method(ctx, expr) is _class_of_method(ctx, target)
    return False


def _class_of_method(ctx: LintContext, node: ast.AST) -> Optional[ast.ClassDef]:
    func = ctx.enclosing_function(node)
    return ctx.enclosing_class(func) if func is not None else None


def _parameter_receiving(site: ast.Call, func, name: str) -> Optional[str]:
    params = [a.arg for a in list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)]
    if isinstance(site.func, ast.Attribute) and params and params[0] in ("self", "cls"):
        params = params[1:]
    for index, arg in enumerate(site.args):
        if isinstance(arg, ast.Starred):
            return None
        if isinstance(arg, ast.Name) and arg.id == name and index < len(params):
            return params[index]
    for kw in site.keywords:
        if kw.arg and isinstance(kw.value, ast.Name) and kw.value.id == name:
            return kw.arg
    return None


# -- what ``**kwargs`` holds -----------------------------------------------------------------


def _star_options(ctx: LintContext, call: ast.Call):
    """``(always, branch, literal)`` for the ``**name`` arguments of ``call``: ``always`` when
    they certainly pass an order option, ``branch`` the ``if`` under which one is added only
    conditionally, ``literal`` the dict display a fix can extend. None when a ``**`` argument
    cannot be read (a parameter, a function's result)."""
    always, branch, literal = False, None, None
    for kw in call.keywords:
        if kw.arg is not None:
            continue
        found = _dict_options(ctx, kw.value, call)
        if found is None:
            return None
        keys, conditional, display = found
        always = always or bool(keys & _ORDER_KWARGS)
        branch = branch or next((node for key, node in conditional.items() if key in _ORDER_KWARGS), None)
        literal = literal or display
    return always, branch, literal


def _dict_keys(ctx: LintContext, expr: ast.AST, depth: int = 0) -> Optional[Tuple[Set[str], Optional[ast.Dict]]]:
    """The string keys of a dict display or ``dict(a=...)`` (followed through names)."""
    value = ctx.value_of(expr) if isinstance(expr, ast.Name) else expr
    if isinstance(value, ast.IfExp) and depth < 3:
        # ``{...} if use_cuda else {}``: only the keys both branches pass are certain
        body, orelse = _dict_keys(ctx, value.body, depth + 1), _dict_keys(ctx, value.orelse, depth + 1)
        if body is None or orelse is None:
            return None
        return body[0] & orelse[0], None
    if isinstance(value, ast.Dict):
        keys: Set[str] = set()
        for key, item in zip(value.keys, value.values):
            if key is None:  # ``{**base, ...}``
                inner = _dict_keys(ctx, item, depth + 1) if depth < 3 else None
                if inner is None:
                    return None
                keys |= inner[0]
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                keys.add(key.value)
            else:
                return None
        return keys, value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and not value.args:
        if any(k.arg is None for k in value.keywords):
            return None
        return {k.arg for k in value.keywords if k.arg is not None}, None  # all named (checked above)
    return None


def _dict_options(ctx: LintContext, expr: ast.AST, call: ast.Call):
    """``(keys always present, {key: if-node adding it conditionally}, dict display)``."""
    if not isinstance(expr, ast.Name):
        found = _dict_keys(ctx, expr)
        return None if found is None else (found[0], {}, None)
    bound = ctx.binding(expr)
    if bound is None or bound.kind != "assign" or bound.value is None:
        return None
    found = _dict_keys(ctx, bound.value)
    if found is None:
        return None
    keys, display = found
    conditional: Dict[str, ast.stmt] = {}
    scope = ctx.scope_of(call)
    start, end = bound.pos, (call.lineno, call.col_offset)
    for node in ctx.own_nodes(scope, ast.Call, ast.Assign):
        at = (node.lineno, node.col_offset)
        if not start <= at < end:
            continue
        added = _added_keys(ctx, node, expr.id)
        if added is None:
            continue
        if added is False:
            return None  # an update we cannot read
        branch = _branch_between(ctx, node, call, scope)
        for key in added:
            if branch is None:
                keys.add(key)
            else:
                conditional.setdefault(key, branch)
    return keys, conditional, display


def _added_keys(ctx: LintContext, node: ast.AST, name: str):
    """Keys ``node`` adds to dict ``name``: a set, None when it does not touch it, False when
    it does in a way we cannot read."""
    if isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name):
            return None
        if func.attr == "setdefault":
            arg = node.args[0] if node.args else None
            return {arg.value} if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else False
        if func.attr != "update":
            return None
        keys = {k.arg for k in node.keywords if k.arg}
        if any(k.arg is None for k in node.keywords):
            return False
        for arg in node.args:
            found = _dict_keys(ctx, arg)
            if found is None:
                return False
            keys |= found[0]
        return keys
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
                key = target.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    return {key.value}
                return False
    return None


def _branch_between(ctx: LintContext, node: ast.AST, call: ast.Call, scope: ast.AST) -> Optional[ast.stmt]:
    """The innermost ``if`` (or loop, ``try``) around ``node`` that does not also hold ``call``."""
    around_call = set(ctx.ancestors(call))
    for anc in ctx.ancestors(node):
        if anc is scope or anc in around_call:
            return None
        if isinstance(anc, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            return anc
    return None


# -- exceptions ---------------------------------------------------------------------------


def _is_iterable_dataset(ctx: LintContext, dataset: ast.expr) -> bool:
    """Iterable-style datasets cannot be shuffled by the loader (it would raise)."""
    cls = ctx.local_class(ctx.class_of(dataset))
    if cls is not None:
        return any("IterableDataset" in base for base in ctx.base_names(cls))
    name = terminal_name(dataset).lower()
    return "iter" in name or "stream" in name


def _ignores_index(ctx: LintContext, dataset: ast.expr) -> bool:
    """A dataset whose ``__getitem__`` never reads the index it is given draws its own sample
    (``start = torch.randint(...)``: a random window of a long text): the order the loader asks
    in changes nothing."""
    cls = ctx.local_class(ctx.class_of(dataset))
    if cls is None:
        return False
    getitem = next(
        (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__getitem__"),
        None,
    )
    if getitem is None or len(getitem.args.args) != 2 or getitem.args.vararg or getitem.args.kwarg:
        return False
    index = getitem.args.args[1].arg
    return not any(isinstance(n, ast.Name) and n.id == index for n in ast.walk(getitem))


def _is_one_batch(ctx: LintContext, call: ast.Call) -> bool:
    """``DataLoader(Subset(ds, range(1)), batch_size=1)``: a single batch has no order."""
    subset = ctx.value_of(call.args[0])
    if not (isinstance(subset, ast.Call) and terminal_name(subset.func) == "Subset" and len(subset.args) >= 2):
        return False
    size = _length(subset.args[1])
    if size is None:
        return False
    batch = torchapi.keyword(call, "batch_size")
    batch_value = batch.value if batch is not None else (call.args[1] if len(call.args) > 1 else ast.Constant(1))
    return isinstance(batch_value, ast.Constant) and isinstance(batch_value.value, int) and size <= batch_value.value


def _only_first_batch_taken(ctx: LintContext, call: ast.Call) -> bool:
    """``small = DataLoader(train_set, batch_size=1024)`` read only as ``next(iter(small))``: one
    batch taken (to plot activations, to check shapes), never an epoch, so no order to shuffle.
    Not when the loader's own name says it trains: ``x, y = next(iter(train_loader))`` then
    trained on (pytorch/examples' forward-forward) takes the first samples in stored order."""
    target = _assigned_target(ctx, call)
    if not isinstance(target, ast.Name) or _TRAIN.search(target.id):
        return False
    uses = [
        node
        for node in ast.walk(ctx.scope_of(call))
        if isinstance(node, ast.Name) and node.id == target.id and isinstance(node.ctx, ast.Load)
    ]
    return bool(uses) and all(_first_batch_of(ctx, use) for use in uses)


def _first_batch_of(ctx: LintContext, name: ast.Name) -> bool:
    """``name`` is read as ``next(iter(name))``."""
    inner = ctx.parents.get(name)
    outer = ctx.parents.get(inner) if inner is not None else None
    return (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id == "iter"
        and inner.args == [name]
        and isinstance(outer, ast.Call)
        and isinstance(outer.func, ast.Name)
        and outer.func.id == "next"
        and outer.args[:1] == [inner]
    )


def _length(indices: ast.AST) -> Optional[int]:
    if isinstance(indices, (ast.List, ast.Tuple)):
        return len(indices.elts)
    if (
        isinstance(indices, ast.Call)
        and isinstance(indices.func, ast.Name)
        and indices.func.id == "list"
        and indices.args
    ):
        return _length(indices.args[0])
    if isinstance(indices, ast.Call) and isinstance(indices.func, ast.Name) and indices.func.id == "range":
        values = [b.value for b in indices.args if isinstance(b, ast.Constant) and isinstance(b.value, int)]
        if values and len(values) == len(indices.args):
            return len(range(*values))
    return None


# -- report --------------------------------------------------------------------------------


def _fix(ctx: LintContext, call: ast.Call, literal: Optional[ast.Dict]) -> Optional[Fix]:
    if any(k.arg is None for k in call.keywords):
        # ``shuffle=True`` next to ``**kwargs`` that may hold ``shuffle`` raises a TypeError:
        # add it to the dict instead (a later ``.update`` still overrides it).
        if literal is None:
            return None
        return add_dict_entry(ctx.source, literal, "shuffle", "True", "Add `'shuffle': True` to the options")
    return add_keyword(ctx.source, call, "shuffle=True", "Pass `shuffle=True`")
