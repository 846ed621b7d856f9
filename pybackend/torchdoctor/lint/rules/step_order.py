"""TD002: ``optimizer.step()`` before this iteration's ``loss.backward()``.

The step then applies whatever ``.grad`` holds at that point (zeros right after
``zero_grad()``, or the previous batch's gradients), and the gradients computed afterwards
are cleared before they are ever used: the model trains a step behind, or not at all.
"""

from __future__ import annotations

import ast

from ..context import LintContext
from ..model import WARNING
from ..registry import Reporter, rule
from ..training import analysis


def _conditional(ctx: LintContext, call: ast.AST, unit: ast.AST) -> bool:
    """A step under an ``if`` (``if i % k == 0: optimizer.step()`` at the top of the loop) is
    gradient accumulation applying the previous iterations' gradients: deliberate."""
    for anc in ctx.ancestors(call):
        if anc is unit:
            return False
        if isinstance(anc, (ast.If, ast.Try, ast.IfExp)):
            return True
    return False


@rule(
    "TD002",
    "step-before-backward",
    "optimizer.step() runs before loss.backward() in the same iteration",
    WARNING,
    """
`optimizer.step()` uses the gradients that are in `.grad` **when it runs**. Called before this
iteration's `loss.backward()`, it applies zeros (right after `zero_grad()`) or the previous
batch's gradients; the fresh gradients are then wiped by the next `zero_grad()`. Training
silently stalls or lags one batch behind. The order is `zero_grad()`, forward, loss,
`backward()`, `step()`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    training = analysis(ctx)
    for unit in training.units:
        backward_positions = [(c.lineno, c.col_offset) for c in training.backwards(unit.node)]
        if not backward_positions:
            continue
        checked = set()
        for step in sorted(unit.steps, key=lambda s: (s.call.lineno, s.call.col_offset)):
            if step.key in checked:
                continue
            checked.add(step.key)
            at = (step.call.lineno, step.call.col_offset)
            before = [p for p in backward_positions if p < at]
            after = [c for c in training.backwards(unit.node) if (c.lineno, c.col_offset) > at]
            if before or not after or _conditional(ctx, step.call, unit.node):
                continue
            report.report(
                step.call,
                f"`{ctx.text(step.call)}` runs before `{ctx.text(after[0])}` (line {after[0].lineno}): "
                f"it applies stale or zero gradients, and this iteration's gradients are never used.",
            )
