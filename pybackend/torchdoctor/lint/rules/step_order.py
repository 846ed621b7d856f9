"""TD002: ``optimizer.step()`` before this iteration's ``loss.backward()``.

The step then applies whatever ``.grad`` holds at that point (zeros right after
``zero_grad()``, or the previous batch's gradients), and the gradients computed afterwards
are cleared before they are ever used: the model trains a step behind, or not at all.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from .. import torchapi
from ..context import LintContext
from ..model import WARNING
from ..registry import Reporter, rule
from ..training import Step, Unit, analysis, parameter_owners


def _conditional(ctx: LintContext, call: ast.AST, unit: ast.AST) -> bool:
    """A step under an ``if`` (``if i % k == 0: optimizer.step()`` at the top of the loop) is
    gradient accumulation applying the previous iterations' gradients: deliberate."""
    return _condition_around(ctx, call, unit) is not None


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
        by_statement = {ctx.parents.get(s.call): s.call for s in steps}  # statement -> its step call
        for step in steps:  # each step: ESRGAN's warm-up branch steps G before its main step does
            at = _pos(step.call)
            # Each optimizer on its own: a GAN's discriminator backward (before its own step)
            # does not feed the generator's step, so only backward calls since another
            # optimizer's last step count.
            # Steps written back to back (``optimizer_D_A.step()``, ``optimizer_D_B.step()`` after
            # one ``D_loss.backward()``) share that backward: a step of the same run is no boundary.
            run = _run_of_steps(ctx, step, by_statement)
            since = max(
                (_pos(s.call) for s in steps if s.key != step.key and _pos(s.call) < at and s.call not in run),
                default=(0, 0),
            )
            before = [
                b
                for b in backwards
                if since < _pos(b) < at
                and not _cut_off(ctx, b, step.call, unit.node)
                and not ctx.exclusive(b, step.call)  # ``if fp16: scaled.backward()`` / ``else: opt.step()``
            ]
            after = [b for b in backwards if _pos(b) > at]
            condition = _condition_around(ctx, step.call, unit.node)
            if condition is not None and not (after and ctx.is_inside(after[0], condition)):
                # under an ``if`` with no backward of its own after it (``if (i + 1) % k == 0:
                # opt.step()`` at the top of the loop): accumulation, deliberate. A backward
                # after the step in the same ``if`` (a WGAN's generator phase every n_critic
                # iterations, with the step moved up) is the bug all the same.
                continue
            if before and after:
                _between_partial_backwards(ctx, report, unit, step, steps, before[-1], after[0])
            if before or not after:
                continue
            report.report(
                step.call,
                f"`{ctx.text(step.call)}` runs before `{ctx.text(after[0])}` (line {after[0].lineno}): "
                f"it applies stale or zero gradients, and this iteration's gradients are never used.",
            )


def _condition_around(ctx: LintContext, call: ast.AST, unit: ast.AST) -> Optional[ast.AST]:
    """The innermost ``if`` / ``try`` / conditional expression around ``call`` within ``unit``."""
    for anc in ctx.ancestors(call):
        if anc is unit:
            return None
        if isinstance(anc, (ast.If, ast.Try, ast.IfExp)):
            return anc
    return None


_LEAVES = (ast.Continue, ast.Break, ast.Return, ast.Raise)


def _cut_off(ctx: LintContext, backward: ast.AST, step: ast.AST, unit: ast.AST) -> bool:
    """``backward`` is in a branch that leaves the iteration (``if warmup: loss.backward();
    opt.step(); continue``) and ``step`` is not in that branch: that backward never reaches it."""
    child: ast.AST = backward
    for anc in ctx.ancestors(backward):
        if anc is unit:
            return False
        if isinstance(anc, ast.If):
            block = anc.body if child in anc.body else anc.orelse if child in anc.orelse else None
            if block and isinstance(block[-1], _LEAVES) and not any(ctx.is_inside(step, s) for s in block):
                return True
        child = anc
    return False


def _run_of_steps(ctx: LintContext, step: Step, by_statement: Dict[Optional[ast.AST], ast.Call]) -> Set[ast.Call]:
    """The step calls of the statements right before ``step``'s own, while each is a bare step
    call (``opt_a.step()`` on a line of its own): a run of steps that follows one backward."""
    statement = ctx.parents.get(step.call)
    block = _block_of(ctx, statement)
    if not isinstance(statement, ast.Expr) or block is None:
        return set()
    run: Set[ast.Call] = set()
    for previous in reversed(block[: block.index(statement)]):
        call = by_statement.get(previous)
        if call is None:
            break
        run.add(call)
    return run


def _block_of(ctx: LintContext, statement: Optional[ast.AST]) -> Optional[List[ast.stmt]]:
    """The statement list holding ``statement`` (a body, an ``else``, a ``finally``...)."""
    parent = ctx.parents.get(statement) if statement is not None else None
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and statement in block:
            return block
    return None


def _between_partial_backwards(
    ctx: LintContext, report: Reporter, unit: Unit, step: Step, steps: List[Step], last: ast.Call, later: ast.Call
) -> None:
    """A step between two backward calls of the same optimizer's losses (dcgan's
    ``errD_real.backward()``, ``optimizerD.step()``, ``errD_fake.backward()``): the step applies
    the first loss's gradients only, and the later ones are cleared before any step uses them.

    Reported only when that is certain from the loop's own statements: the optimizer is cleared
    in the loop before its step (so its next step starts from zero), nothing steps or clears
    between the step and the later backward, and the next clear after it (``netG.zero_grad()``)
    is of the optimizer stepped next and not of this one: the later gradients reach no step."""
    at = _pos(step.call)
    clears = _clears(ctx, unit)
    owners = parameter_owners(ctx, ctx.construction_of(step.optimizer))
    if not any(_pos(c) < at and _clears_step(ctx, c, step, owners) is not False for c in clears):
        return
    if any(at < _pos(c) < _pos(later) for c in clears) or any(at < _pos(s.call) < _pos(later) for s in steps):
        return
    following = next((s for s in steps if _pos(s.call) > _pos(later)), None)
    after_clear = next((c for c in clears if _pos(c) > _pos(later)), None)
    if following is None or after_clear is None or _pos(after_clear) > _pos(following.call):
        return
    if {s.key for s in steps} != {step.key, following.key} or following.key == step.key:
        return
    next_owners = parameter_owners(ctx, ctx.construction_of(following.optimizer))
    if _clears_step(ctx, after_clear, step, owners) is not False or not _clears_step(
        ctx, after_clear, following, next_owners
    ):
        return
    if _conditional(ctx, later, unit.node) or _conditional(ctx, after_clear, unit.node):
        return
    report.report(
        step.call,
        f"`{ctx.text(step.call)}` runs between `{ctx.text(last)}` (line {last.lineno}) and "
        f"`{ctx.text(later)}` (line {later.lineno}): it applies the first gradients only; the later "
        f"ones are cleared (line {after_clear.lineno}, then by `{step.key}`'s own clear) before any "
        "step uses them. Step after the last of this optimizer's backward calls.",
    )


def _clears(ctx: LintContext, unit: Unit) -> List[ast.Call]:
    """The unit's own calls that clear gradients, in source order."""
    training = analysis(ctx)
    clearing = training.clearing_calls()  # the others cannot clear: not asked
    return [c for c in training.own_calls(unit.node) if c in clearing and torchapi.zero_grad_target(ctx, c)[0]]


def _clears_step(ctx: LintContext, clear: ast.Call, step: Step, owners: Set[str]) -> Optional[bool]:
    """Whether ``clear`` clears the gradients ``step`` applies: True, False, or None (cannot tell)."""
    _, receiver = torchapi.zero_grad_target(ctx, clear)
    if receiver is not None:
        return ctx.text(receiver) == step.key
    func = clear.func
    if not (isinstance(func, ast.Attribute) and func.attr == "zero_grad" and owners):
        return None
    module = ctx.text(func.value)
    return any(owner == module or owner.startswith(module + ".") for owner in owners)


def _pos(node: ast.expr) -> Tuple[int, int]:
    return (node.lineno, node.col_offset)
