"""TD001: a training loop that never clears gradients.

``loss.backward()`` adds into ``.grad``; without ``optimizer.zero_grad()`` each step applies
the sum of every gradient since the start, and the loss wanders instead of falling.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..context import LintContext
from ..fixes import insert_line_after
from ..model import WARNING, Fix
from ..registry import Reporter, rule
from ..training import Step, Unit, analysis


@rule(
    "TD001",
    "missing-zero-grad",
    "Gradients are never cleared between optimizer steps",
    WARNING,
    """
`loss.backward()` **adds** to each parameter's `.grad`. Without `optimizer.zero_grad()` once per
step, every update applies the sum of all gradients so far: the loss plateaus or diverges and
nothing crashes. Call `optimizer.zero_grad()` once per iteration (before `backward()` or right
after `step()`); with gradient accumulation, right after the `step()`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    training = analysis(ctx)
    for unit in training.units:
        if not _runs_repeatedly(ctx, unit):
            continue
        everything, keys = training.clears(unit.node)
        if everything:
            continue
        if not unit.is_loop and _caller_loops_clear(ctx, training, unit):
            continue
        reported = set()
        for step in unit.steps:
            if step.key in keys or step.key in reported:
                continue
            reported.add(step.key)
            report.report(step.call, _message(step, unit), fix=_fix(ctx, step))


def _runs_repeatedly(ctx: LintContext, unit: Unit) -> bool:
    """A loop repeats; a function repeats when some loop here calls it, or when it is a
    Lightning ``training_step`` (the trainer loops over it)."""
    if unit.is_loop:
        return True
    if getattr(unit.node, "name", "") == "training_step":
        return True
    return any(ctx.enclosing_loops(site) for site in ctx.call_sites(unit.node))


def _caller_loops_clear(ctx: LintContext, training, unit: Unit) -> bool:
    """A ``train_step()`` helper is fine when every loop that calls it clears gradients."""
    looping_sites = [site for site in ctx.call_sites(unit.node) if ctx.enclosing_loops(site)]
    if not looping_sites:
        return False
    for site in looping_sites:
        everything, keys = training.clears(ctx.enclosing_loops(site)[0])
        if not (everything or keys):
            return False
    return True


def _message(step: Step, unit: Unit) -> str:
    where = "this loop" if unit.is_loop else f"`{unit.node.name}()`"
    return (
        f"`{step.key}` is stepped but {where} never calls `{step.key}.zero_grad()`: "
        f"each `backward()` adds to the previous gradients, so every step applies their running sum."
    )


def _fix(ctx: LintContext, step: Step) -> Optional[Fix]:
    stmt = ctx.statement_of(step.call)
    if not (isinstance(stmt, ast.Expr) and stmt.value is step.call):
        return None
    code = f"{step.key}.zero_grad()"
    return insert_line_after(ctx.source, stmt, code, f"Insert `{code}` after the step")
