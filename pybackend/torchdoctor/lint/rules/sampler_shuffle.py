"""TD019: a ``DataLoader`` given both a sampler and ``shuffle=True``.

``DataLoader.__init__`` checks ``if sampler is not None and shuffle: raise ValueError("sampler
option is mutually exclusive with shuffle")``: the loader is never built. The usual way in is
adding a ``DistributedSampler`` to a single-process script and keeping its ``shuffle=True``.

Flagged only when ``shuffle`` is the constant ``True`` and the ``sampler=`` value is a sampler
built in sight (``DistributedSampler(...)``, ``RandomSampler(...)``, inline or through a name or
``self.x``). When the name may also be ``None`` (``if distributed: s = DistributedSampler(d) else:
s = None``), the crash happens only on the sampler's path: a warning, and the fix writes
``shuffle=(s is None)``, which keeps the other path as it was. Otherwise an error, and the fix
writes ``shuffle=False`` (a sampler decides the order; the loader never ran with ``True``).
Options given as ``**kwargs`` are read from the dict display and its ``update``s before the call
(no fix there: the dictionary may feed other loaders).
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

from .. import torchapi
from ..context import LintContext, terminal_name
from ..fixes import replace_node
from ..model import ERROR, WARNING, Fix
from ..registry import Reporter, rule

_DATA = "torch.utils.data."
_SAMPLER_CLASS = re.compile(r"^[A-Z]\w*Sampler$")
SAMPLERS = frozenset(
    {_DATA + "DistributedSampler", _DATA + "distributed.DistributedSampler"}
    | {_DATA + n for n in ("RandomSampler", "SequentialSampler", "SubsetRandomSampler", "WeightedRandomSampler")}
    | {_DATA + "sampler." + n for n in ("RandomSampler", "SequentialSampler", "SubsetRandomSampler")}
    | {_DATA + "sampler.WeightedRandomSampler"}
)


@rule(
    "TD019",
    "sampler-with-shuffle",
    "DataLoader given a sampler and shuffle=True: raises ValueError",
    ERROR,
    """
`DataLoader(dataset, sampler=..., shuffle=True)` raises `ValueError: sampler option is mutually
exclusive with shuffle` when it is built: with a sampler, the sampler decides the order, and
`shuffle` must be left out or `False`. A `DistributedSampler` shuffles on its own (its
`shuffle=True` is the default), so drop the loader's `shuffle=True`; when the sampler exists only
in distributed runs, write `shuffle=(sampler is None)`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call in ctx.calls_of_class([torchapi.DATALOADER]):
        shuffle = torchapi.keyword(call, "shuffle")
        given = torchapi.keyword(call, "sampler")
        if any(k.arg is None for k in call.keywords):
            _check_star(ctx, report, call)
            continue
        if shuffle is None or given is None or not _is_true(shuffle.value):
            continue
        found = _samplers(ctx, given.value)
        if found is None:
            continue
        samplers, maybe_none = found
        sampler = samplers[0]
        name = terminal_name(sampler.func)
        where = f"`{name}` (line {sampler.lineno})"
        if maybe_none:
            message = (
                f"`shuffle=True` with `sampler={ctx.text(given.value)}`: when it is the {where}, "
                "`DataLoader` raises `ValueError: sampler option is mutually exclusive with shuffle`."
            )
            report.report(shuffle, message, fix=_fix(ctx, shuffle.value, given.value, True), severity=WARNING)
        else:
            message = (
                f"`shuffle=True` with the sampler {where}: `DataLoader` raises `ValueError: sampler option is "
                "mutually exclusive with shuffle`; the sampler decides the order."
            )
            report.report(shuffle, message, fix=_fix(ctx, shuffle.value, given.value, False, samplers))


def _is_true(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


def _samplers(ctx: LintContext, expr: ast.expr) -> Optional[Tuple[List[ast.Call], bool]]:
    """The sampler constructions ``expr`` may hold and whether it may also be ``None``; None
    when any value it may hold is something else or cannot be followed."""
    values = _values(ctx, expr)
    if values is None:
        return None
    calls = [v for v in values if isinstance(v, ast.Call) and _is_sampler(ctx, v)]
    nones = [v for v in values if isinstance(v, ast.Constant) and v.value is None]
    if not calls or len(calls) + len(nones) != len(values):
        return None
    return calls, bool(nones)


def _is_sampler(ctx: LintContext, call: ast.Call) -> bool:
    """torch's samplers, and any class named ``...Sampler`` (``RASampler``, a project's own): a
    constructor call is never None, and any sampler that is not None makes ``shuffle=True`` raise."""
    return ctx.callee_class(call) in SAMPLERS or bool(_SAMPLER_CLASS.match(terminal_name(call.func)))


def _values(ctx: LintContext, expr: ast.expr, depth: int = 0) -> Optional[List[ast.expr]]:
    if depth > 4:
        return None
    if isinstance(expr, ast.IfExp):
        body, orelse = _values(ctx, expr.body, depth + 1), _values(ctx, expr.orelse, depth + 1)
        return None if body is None or orelse is None else body + orelse
    if isinstance(expr, ast.Name):
        bindings = ctx.alternatives(expr)
        if not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
            return None
        found: List[ast.expr] = []
        for binding in bindings:
            assert binding.value is not None
            more = _values(ctx, binding.value, depth + 1)
            if more is None:
                return None
            found.extend(more)
        return found
    if isinstance(expr, ast.Attribute):
        value = ctx.value_of(expr)
        return None if value is None or value is expr else _values(ctx, value, depth + 1)
    return [expr]


def _fix(
    ctx: LintContext, value: ast.expr, sampler: ast.expr, maybe_none: bool, samplers: Optional[List[ast.Call]] = None
) -> Optional[Fix]:
    if maybe_none:
        if not isinstance(sampler, (ast.Name, ast.Attribute)):
            return None  # an inline ``X if c else None``: no name to test
        text = f"({ctx.text(sampler)} is None)"
        return replace_node(ctx.source, value, text, f"Shuffle only without the sampler: `shuffle={text}`")
    if samplers and not all(_shuffles(ctx, call) for call in samplers):
        return None  # a sampler told not to shuffle: whether to shuffle is the user's choice
    return replace_node(ctx.source, value, "False", "Let the sampler decide the order: `shuffle=False`")


def _shuffles(ctx: LintContext, call: ast.Call) -> bool:
    """Whether the sampler ``call`` builds draws a random order."""
    name = terminal_name(call.func)
    if name == "DistributedSampler":
        if len(call.args) >= 4:
            return False  # shuffle given by position: not read
        shuffle = torchapi.keyword(call, "shuffle")
        return shuffle is None or _is_true(shuffle.value)
    return name in ("RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler")


# -- ``DataLoader(data, **train_kwargs)`` ------------------------------------------------------------

Entries = Dict[str, Tuple[ast.expr, bool]]  # key -> (value, set only on some paths)


def _check_star(ctx: LintContext, report: Reporter, call: ast.Call) -> None:
    """The same check when the options come in ``**name`` dictionaries (pytorch/examples' mnist:
    ``train_kwargs.update(accel_kwargs)``). Reported at the ``DataLoader`` call, without a fix:
    the dictionary may feed other loaders too."""
    entries: Entries = {k.arg: (k.value, False) for k in call.keywords if k.arg is not None}
    for kw in call.keywords:
        if kw.arg is None:
            found = _dict_entries(ctx, kw.value, call, 0) if isinstance(kw.value, ast.Name) else None
            if found is None:
                return  # a ``**`` we cannot read
            entries.update(found)
    if "shuffle" not in entries or "sampler" not in entries or not _is_true(entries["shuffle"][0]):
        return
    shuffle, shuffle_sometimes = entries["shuffle"]
    sampler_value, sampler_sometimes = entries["sampler"]
    found_samplers = _samplers(ctx, sampler_value)
    if found_samplers is None:
        return
    samplers, maybe_none = found_samplers
    sometimes = shuffle_sometimes or sampler_sometimes or maybe_none
    message = (
        f"`shuffle=True` (line {shuffle.lineno}) and the sampler `{terminal_name(samplers[0].func)}` "
        f"(line {samplers[0].lineno}) reach this `DataLoader` through `**`{' on some paths' if sometimes else ''}: "
        "it raises `ValueError: sampler option is mutually exclusive with shuffle`."
    )
    report.report(call, message, severity=WARNING if sometimes else None)


def _dict_entries(ctx: LintContext, name: ast.Name, at: ast.AST, depth: int) -> Optional[Entries]:
    """What the dict ``name`` holds at ``at``: its display, then its ``update(...)`` calls and
    ``name[key] = value`` assignments in the same scope before ``at``; None when something
    else touches it or a part cannot be read."""
    bound = ctx.binding(name)
    if depth > 3 or bound is None or bound.kind != "assign" or not isinstance(bound.value, ast.Dict):
        return None
    entries = _display(bound.value, False)
    if entries is None:
        return None
    scope = ctx.scope_of(name)
    where = ctx.conditions(at)
    end = (getattr(at, "lineno", 0), getattr(at, "col_offset", 0))
    for node in ctx.own_nodes(scope, ast.Call, ast.Assign):
        position = (node.lineno, node.col_offset)
        if not bound.pos <= position < end:
            continue
        sometimes = any(where.get(t) != side for t, side in ctx.conditions(node).items())
        if isinstance(node, ast.Assign):
            target = node.targets[0] if len(node.targets) == 1 else None
            if isinstance(target, ast.Subscript) and _is_name(target.value, name.id):
                key = target.slice
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return None
                entries[key.value] = (node.value, sometimes)
            continue
        func = node.func
        reads = (
            ctx.callee_class(node) == torchapi.DATALOADER or isinstance(func, ast.Attribute) and func.attr == "update"
        )
        if any(_is_name(a, name.id) for a in node.args) and not reads:
            return None  # handed to a function that may change it
        if not (isinstance(func, ast.Attribute) and _is_name(func.value, name.id)):
            continue
        if func.attr != "update":
            return None  # pop, setdefault, clear...: not followed
        more = _update_entries(ctx, node, sometimes, depth)
        if more is None:
            return None
        entries.update(more)
    return entries


def _update_entries(ctx: LintContext, call: ast.Call, sometimes: bool, depth: int) -> Optional[Entries]:
    found: Entries = {k.arg: (k.value, sometimes) for k in call.keywords if k.arg is not None}
    if len(call.args) > 1 or any(k.arg is None for k in call.keywords):
        return None
    if call.args:
        arg = call.args[0]
        if isinstance(arg, ast.Dict):
            more = _display(arg, sometimes)
        elif isinstance(arg, ast.Name):
            more = _dict_entries(ctx, arg, call, depth + 1)
            if more is not None:
                more = {k: (v, sometimes or s) for k, (v, s) in more.items()}
        else:
            more = None
        if more is None:
            return None
        found.update(more)
    return found


def _display(node: ast.Dict, sometimes: bool) -> Optional[Entries]:
    entries: Entries = {}
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None  # ``**other`` inside, or a computed key
        entries[key.value] = (value, sometimes)
    return entries


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
