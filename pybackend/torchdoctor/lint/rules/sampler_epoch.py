"""TD018: a shuffling ``DistributedSampler`` whose ``set_epoch`` is never called.

``DistributedSampler`` shuffles with the seed ``seed + epoch``, and ``epoch`` only changes when
the training loop calls ``sampler.set_epoch(epoch)``. Without it, every epoch visits the data
in the same order on every rank: the shuffle happens once. Nothing crashes, the loss looks
fine, and the run generalises a little worse (torch's docs ask for the call explicitly).

Nothing in the file may call ``set_epoch`` (however it is reached), and the sampler must not
pass ``shuffle=False``. Then a warning when the sampler's ``DataLoader`` is iterated inside another
loop, or handed by a loop to a function of this file (``train(model, loader)``); an information
when the loader is reached some other way (returned by a helper, kept in ``self.train_data``)
but the file has a ``for epoch in ...`` loop: code in another file might call ``set_epoch``.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

from .. import torchapi
from ..context import LintContext, terminal_name
from ..model import INFORMATION, WARNING, Fix, Span, TextEdit
from ..registry import Reporter, rule
from ..sharded import sharded_loaders

SAMPLERS = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_EPOCH = re.compile(r"epoch", re.IGNORECASE)
_NOT_TRAIN = re.compile(r"val|test|eval|dev|holdout", re.IGNORECASE)


@rule(
    "TD018",
    "sampler-without-set-epoch",
    "DistributedSampler shuffles, but set_epoch is never called",
    WARNING,
    """
A `DistributedSampler` shuffles with the seed `seed + epoch`, and its epoch only changes when
you call `sampler.set_epoch(epoch)` at the start of each epoch. Without the call every epoch
sees the samples in exactly the same order, on every rank: the data is shuffled once, not
every epoch. Nothing fails and the loss still falls; the model just generalises worse. Call
`set_epoch(epoch)` before iterating the loader in each epoch.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    samplers = ctx.calls_of_class(SAMPLERS)
    if _calls_set_epoch(ctx):
        return
    _check_imported(ctx, report)
    for call in samplers:
        if _shuffle_off(call) or _for_evaluation(ctx, call) or _handed_on(ctx, call):
            continue
        found = _epoch_loop(ctx, call)
        if found is not None:
            epoch_loop, sampler = found
            report.report(call, _message(call, epoch_loop), fix=_fix(ctx, epoch_loop, sampler))
            continue
        named = _named_epoch_loop(ctx)
        if named is not None:  # the loader is reached some way we do not follow: say less
            report.report(call, _hedged(call, named), severity=INFORMATION)


def _check_imported(ctx: LintContext, report: Reporter) -> None:
    """A loader built with a shuffling ``DistributedSampler`` by a factory of another file
    (``train_loader, val_loader = create_dataloader(config)``), iterated in an epoch loop here,
    where, as in the factory's file, nothing calls ``set_epoch``: reported where it is received."""
    for found in sharded_loaders(ctx):
        home, sampler = found.home, found.sampler
        if home is ctx or _shuffle_off(sampler) or _for_evaluation(home, sampler) or _calls_set_epoch(home):
            continue
        for holder in found.holders:
            name = ctx.text(holder)
            loop = None if _NOT_TRAIN.search(name) else _loop_over(ctx, name) or _loop_passing(ctx, name)
            if loop is None:
                continue
            # No quick fix: the other file may build the sampler only under a condition (a
            # RandomSampler has no set_epoch) or the loader be rebuilt inside the loop.
            report.report(
                holder,
                f"`{name}` draws from a shuffling `{terminal_name(sampler.func)}` ({found.where(ctx)}), but "
                f"`set_epoch` is never called in the epoch loop (line {loop.lineno}): every epoch visits the "
                "samples in the same order.",
            )
            break  # once per loader


def _calls_set_epoch(ctx: LintContext) -> bool:
    return any(isinstance(c.func, ast.Attribute) for c in ctx.calls_named("set_epoch"))


def _for_evaluation(ctx: LintContext, call: ast.Call) -> bool:
    """A validation or test sampler: its order does not matter (``sampler2 = DistributedSampler(val_dataset)``)."""
    names = [_assigned_name(ctx, call) or ""] + [ctx.text(a) for a in call.args[:1]]
    return any(_NOT_TRAIN.search(n) for n in names)


def _handed_on(ctx: LintContext, call: ast.Call) -> bool:
    """The sampler is passed to a function other than a DataLoader (``train(..., sampler=s)``),
    which may call ``set_epoch`` on it where we cannot see."""
    name = _assigned_name(ctx, call)
    if name is None:
        return False
    handed = _uses(ctx).handed
    if name not in handed:  # once per name: every loader of a script may take ``sampler=train_sampler``
        handed[name] = any(
            not (
                ctx.callee_class(other) == torchapi.DATALOADER
                or isinstance(other.func, ast.Name)
                and other.func.id == "dict"
            )
            for other in _uses(ctx).passing.get(name, ())
        )
    return handed[name]


def _shuffle_off(call: ast.Call) -> bool:
    shuffle = next((k.value for k in call.keywords if k.arg == "shuffle"), None)
    if shuffle is None:
        return False
    return not (isinstance(shuffle, ast.Constant) and shuffle.value is True)  # False, or unknown: quiet


def _assigned_name(ctx: LintContext, call: ast.Call) -> Optional[str]:
    stmt = ctx.statement_of(call)
    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, (ast.Name, ast.Attribute)):
            return ctx.text(target)
    return None


def _epoch_loop(ctx: LintContext, sampler_call: ast.Call):
    """(the epoch loop, the sampler's expression) when a loop over the sampler's DataLoader sits
    inside another loop, or a loop hands that loader to a function of this file."""
    sampler = _assigned_name(ctx, sampler_call)
    uses = _uses(ctx)
    given = uses.loaders_of.get(sampler_call)
    if given is None and sampler is not None:  # found by the sampler's name alone: once per name
        if sampler not in uses.epoch_loops:
            uses.epoch_loops[sampler] = _first_epoch_loop(ctx, uses.loaders.get(sampler, []), sampler)
        return uses.epoch_loops[sampler]
    return _first_epoch_loop(ctx, uses.loaders_given(sampler_call, sampler), sampler)


def _first_epoch_loop(ctx: LintContext, loader_calls: List[ast.Call], sampler: Optional[str]):
    for loader_call in loader_calls:
        loader = _assigned_name(ctx, loader_call)
        if loader is None:
            continue
        loops = _uses(ctx).loops
        if loader not in loops:  # once per loader name
            loops[loader] = _loop_over(ctx, loader) or _loop_passing(ctx, loader)
        loop = loops[loader]
        if loop is not None:
            return loop, sampler if sampler is not None else f"{loader}.sampler"
    return None


def _loop_over(ctx: LintContext, loader: str) -> Optional[ast.stmt]:
    """The loop around a ``for batch in loader`` loop."""
    for loop in _uses(ctx).loops_over.get(loader, ()):
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            outer = next((a for a in ctx.ancestors(loop) if isinstance(a, _LOOPS)), None)
            if outer is not None:
                return outer
    return None


def _loop_passing(ctx: LintContext, loader: str) -> Optional[ast.stmt]:
    """A loop that calls a function of this file with the loader (``train(model, loader)``):
    an imported function might call ``set_epoch`` itself, so it does not count."""
    for call in _uses(ctx).passing.get(loader, ()):
        if ctx.local_function_called(call) is None:
            continue
        loop = next((a for a in ctx.ancestors(call) if isinstance(a, _LOOPS)), None)
        if loop is not None:
            return loop
    return None


class _Uses:
    """The file's calls and loops by the text of what they take: the calls passing each argument
    (``train(model, loader)``), the DataLoaders given each ``sampler=``, the loops over each
    iterable. Built once: each sampler scanned every call and loop of the file (quadratic in a
    script with a sampler per block)."""

    def __init__(self, ctx: LintContext) -> None:
        self.passing: Dict[str, List[ast.Call]] = {}
        self.loaders: Dict[str, List[ast.Call]] = {}  # by the text of their ``sampler=`` value
        self.loaders_of: Dict[ast.AST, List[ast.Call]] = {}  # by that value itself
        self.loops_over: Dict[str, List[ast.stmt]] = {}
        self._rank: Dict[ast.Call, int] = {}
        # Answers kept per name: whether a sampler so named is handed on, the epoch loop of the
        # loaders given a sampler so named, the epoch loop of a loader so named.
        self.handed: Dict[str, bool] = {}
        self.epoch_loops: Dict[str, Optional[Tuple[ast.stmt, str]]] = {}
        self.loops: Dict[str, Optional[ast.stmt]] = {}
        for rank, call in enumerate(ctx.calls):
            self._rank[call] = rank
            for text in dict.fromkeys(ctx.text(a) for a in list(call.args) + [k.value for k in call.keywords]):
                self.passing.setdefault(text, []).append(call)
            if ctx.callee_class(call) != torchapi.DATALOADER:
                continue
            given = next((k.value for k in call.keywords if k.arg == "sampler"), None)
            if given is not None:
                self.loaders.setdefault(ctx.text(given), []).append(call)
                self.loaders_of.setdefault(given, []).append(call)
        for loop in ctx.loops:
            if isinstance(loop, (ast.For, ast.AsyncFor)):
                self.loops_over.setdefault(ctx.text(torchapi.unwrap_iterable(ctx, loop.iter)), []).append(loop)

    def loaders_given(self, sampler_call: ast.Call, sampler: Optional[str]) -> List[ast.Call]:
        """The DataLoaders given ``sampler_call`` itself, or a value spelled ``sampler``, in
        source order."""
        found = set(self.loaders_of.get(sampler_call, ()))
        if sampler is not None:
            found.update(self.loaders.get(sampler, ()))
        return sorted(found, key=self._rank.__getitem__)


def _uses(ctx: LintContext) -> _Uses:
    return ctx.shared("sampler_epoch.uses", lambda: _Uses(ctx))


def _named_epoch_loop(ctx: LintContext) -> Optional[ast.stmt]:
    """A ``for epoch in ...`` loop anywhere in the file."""
    for loop in ctx.loops:
        if isinstance(loop, (ast.For, ast.AsyncFor)) and _EPOCH.search(ctx.text(loop.target)):
            return loop
    return None


def _message(call: ast.Call, epoch_loop: ast.stmt) -> str:
    return (
        f"`{terminal_name(call.func)}` shuffles with `seed + epoch`, but `set_epoch` is never called in the "
        f"epoch loop (line {epoch_loop.lineno}): every epoch visits the samples in the same order."
    )


def _hedged(call: ast.Call, epoch_loop: ast.stmt) -> str:
    return (
        f"`{terminal_name(call.func)}` shuffles with `seed + epoch`, and nothing in this file calls `set_epoch` "
        f"although it has an epoch loop (line {epoch_loop.lineno}): unless code in another file calls it, "
        "every epoch visits the samples in the same order."
    )


def _fix(ctx: LintContext, epoch_loop: ast.stmt, sampler: str) -> Optional[Fix]:
    """``sampler.set_epoch(<epoch>)`` as the first statement of a ``for epoch in ...`` loop."""
    if not isinstance(epoch_loop, (ast.For, ast.AsyncFor)) or not isinstance(epoch_loop.target, ast.Name):
        return None
    first = epoch_loop.body[0]
    if first.lineno == epoch_loop.lineno:
        return None  # ``for epoch in e: body`` on one line
    line = first.lineno - 1
    code = f"{ctx.source.indent_of(first.lineno)}{sampler}.set_epoch({epoch_loop.target.id}){ctx.source.newline}"
    return Fix(
        f"Call `{sampler}.set_epoch({epoch_loop.target.id})` at the start of each epoch",
        (TextEdit(Span(line, 0, line, 0), code),),
    )
