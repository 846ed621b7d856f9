"""TD002: ``optimizer.step()`` before this iteration's ``loss.backward()``.

The step then applies whatever ``.grad`` holds at that point (zeros right after
``zero_grad()``, or the previous batch's gradients), and the gradients computed afterwards
are cleared before they are ever used: the model trains a step behind, or not at all.
"""

from __future__ import annotations

import ast
from typing import Tuple

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
        backwards = sorted(training.backwards(unit.node), key=_pos)
        if not backwards:
            continue
        steps = sorted(unit.steps, key=lambda s: _pos(s.call))
        checked = set()
        for step in steps:
            if step.key in checked:
                continue
            checked.add(step.key)
            at = _pos(step.call)
            # Each optimizer on its own: a GAN's discriminator backward (before its own step)
            # does not feed the generator's step, so only backward calls since another
            # optimizer's last step count.
            since = max((_pos(s.call) for s in steps if s.key != step.key and _pos(s.call) < at), default=(0, 0))
            before = [b for b in backwards if since < _pos(b) < at]
            after = [b for b in backwards if _pos(b) > at]
            if before or not after or _conditional(ctx, step.call, unit.node):
                continue
            report.report(
                step.call,
                f"`{ctx.text(step.call)}` runs before `{ctx.text(after[0])}` (line {after[0].lineno}): "
                f"it applies stale or zero gradients, and this iteration's gradients are never used.",
            )


def _pos(node: ast.expr) -> Tuple[int, int]:
    return (node.lineno, node.col_offset)
