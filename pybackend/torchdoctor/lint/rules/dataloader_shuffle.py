"""TD017: the training DataLoader is never shuffled.

``DataLoader`` defaults to ``shuffle=False``. Data stored sorted (by class, by file, by date)
then arrives in the same order every epoch: batches are dominated by one class at a time and
the model chases whatever it saw last. It still trains, just worse; users have reported this
bug in many projects (see docs/rules.md for links).
"""

from __future__ import annotations

import ast
import re

from .. import torchapi
from ..context import LintContext, terminal_name
from ..fixes import add_keyword
from ..model import WARNING
from ..registry import Reporter, rule

_TRAIN = re.compile(r"train", re.IGNORECASE)
_NOT_TRAIN = re.compile(r"val|test|eval|dev|holdout|predict|infer", re.IGNORECASE)
_ORDER_KWARGS = frozenset({"shuffle", "sampler", "batch_sampler"})


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
    for call in ctx.calls:
        if ctx.callee_class(call) != torchapi.DATALOADER:
            continue
        if any(k.arg in _ORDER_KWARGS or k.arg is None for k in call.keywords) or len(call.args) >= 3:
            continue
        names = [_assigned_name(ctx, call)]
        if call.args:
            names.append(terminal_name(call.args[0]) or ctx.text(call.args[0]))
        names = [n for n in names if n]
        if any(_NOT_TRAIN.search(n) for n in names) or not any(_TRAIN.search(n) for n in names):
            continue  # ``val_loader = DataLoader(train_ds)`` is an evaluation loader
        if call.args and _is_iterable_dataset(ctx, call.args[0]):
            continue
        report.report(
            call,
            f"`{ctx.text(call.func)}` for the training data does not shuffle (the default is `shuffle=False`): "
            f"every epoch sees the samples in stored order.",
            fix=add_keyword(ctx.source, call, "shuffle=True", "Pass `shuffle=True`"),
        )


def _assigned_name(ctx: LintContext, call: ast.Call) -> str:
    stmt = ctx.statement_of(call)
    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
        return terminal_name(stmt.targets[0])
    return ""


def _is_iterable_dataset(ctx: LintContext, dataset: ast.AST) -> bool:
    """Iterable-style datasets cannot be shuffled by the loader (it would raise)."""
    cls = ctx.local_class(ctx.class_of(dataset))
    if cls is not None:
        return any("IterableDataset" in base for base in ctx.base_names(cls))
    name = terminal_name(dataset).lower()
    return "iter" in name or "stream" in name
