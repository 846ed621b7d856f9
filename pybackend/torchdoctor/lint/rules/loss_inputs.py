"""TD003, TD004, TD006: a loss fed the wrong kind of score.

``CrossEntropyLoss`` and ``BCEWithLogitsLoss`` apply their own (log-)softmax / sigmoid, so
they want raw logits; ``NLLLoss`` applies nothing and wants log-probabilities. Feeding them
the other kind still yields a finite, decreasing-looking loss: the model just learns slower,
saturates, or optimises the wrong objective.
"""

from __future__ import annotations

import ast
import os
from typing import Callable, List, Optional, Tuple

from .. import torchapi
from ..activations import LOG_SOFTMAX, LOGITS, SIGMOID, SOFTMAX, Activation, ActivationAnalysis
from ..bindings import FUNCTIONS, Binding
from ..context import LintContext
from ..fixes import replace_node
from ..model import INFORMATION, WARNING, Fix
from ..registry import Reporter, rule

_KIND_WORDS = {
    SOFTMAX: "softmax probabilities",
    LOG_SOFTMAX: "log-softmax output",
    SIGMOID: "sigmoid probabilities",
    LOGITS: "raw logits from a linear layer",
}


def activations(ctx: LintContext) -> ActivationAnalysis:
    return ctx.shared("activations", lambda: ActivationAnalysis(ctx))


def _losses(ctx: LintContext, wanted: str, broken: Callable[[Activation], bool]):
    """(call, input expression, what the input already went through) for each ``wanted`` loss.

    When the model is bound differently on different paths, the first path whose output is
    ``broken`` for this loss is the one reported; a path that cannot reach the loss with this
    criterion (the criterion chosen in the other branch of the same ``if``) is left out."""
    analysis = activations(ctx)
    for call, kind, given, _ in torchapi.loss_calls(ctx):
        if kind != wanted or given is None or _criterion_may_differ(ctx, call):
            continue
        options = analysis.output_alternatives(given)
        chosen: Tuple[Optional[Activation], Optional[Binding]] = (options[0][0], None)
        for act, bound in options:
            if act is not None and broken(act) and (bound is None or _reaches(ctx, bound, call, given)):
                chosen = (act, bound)
                break
        yield call, given, chosen[0], _path(ctx, chosen[1])


def _criterion_may_differ(ctx: LintContext, call: ast.Call) -> bool:
    """``criterion(...)`` where ``criterion`` is also bound to another class on a path that may
    reach the call: ``CTCLoss()`` when the head is CTC, ``CrossEntropyLoss()`` otherwise (a text
    recognizer picks it by an option, then feeds the CTC branch log-probabilities, as CTCLoss
    requires). Which one a given call sees is not known here: nothing is said."""
    func = call.func
    return isinstance(func, ast.Name) and _bound_to_another_class(ctx, func, ctx.class_of(func), call, 0)


def _bound_to_another_class(ctx: LintContext, name: ast.Name, seen: Optional[str], at: ast.AST, depth: int) -> bool:
    """``name`` may hold an object of a class other than ``seen`` where ``at`` runs: a binding
    of another class not exclusive with ``at``, or, for a parameter, what a caller in this file
    passes (up to three calls up: a text recognizer's ``validation(model, criterion, ...)``
    called by ``test()``, which picks the criterion)."""
    for scope in ctx.scope_chain(name):
        bindings = ctx.bindings.all_bindings(scope, name.id)
        if not bindings:
            continue
        for b in bindings:
            if b.kind == "param" and depth < 3 and _passed_another_class(ctx, b, seen, depth):
                return True
            if b.value is not None and ctx.class_of(b.value) not in (None, seen) and not ctx.exclusive(b.stmt, at):
                return True
        return False
    return False


def _passed_another_class(ctx: LintContext, param: Binding, seen: Optional[str], depth: int) -> bool:
    """A caller in this file passes, for ``param``, a name that may hold another class."""
    func = param.stmt
    if not isinstance(func, FUNCTIONS):
        return False
    for site in ctx.callers_of(func):
        passed = ctx.argument_at(site, func, param.name)
        if isinstance(passed, ast.Name) and _bound_to_another_class(ctx, passed, seen, site, depth + 1):
            return True
    return False


def _path(ctx: LintContext, bound: Optional[Binding]) -> str:
    """`` on the path where `model` is `Probs()` (line 26)`` for a model bound in a branch."""
    if bound is None or bound.value is None:
        return ""
    return f" on the path where `{bound.name}` is `{_short(ctx.text(bound.value))}` (line {bound.stmt.lineno})"


def _reaches(ctx: LintContext, bound: Binding, call: ast.Call, given: ast.expr) -> bool:
    """Whether the model binding ``bound`` can be the one the loss ``call`` sees."""
    sites: List[ast.AST] = [call, given]
    if isinstance(call.func, ast.Name):
        criterion = ctx.binding(call.func)
        if criterion is not None:
            sites.append(criterion.stmt)
    return not any(ctx.exclusive(bound.stmt, site) for site in sites)


@rule(
    "TD003",
    "softmax-before-cross-entropy",
    "Softmax applied before CrossEntropyLoss / F.cross_entropy",
    WARNING,
    """
`nn.CrossEntropyLoss` and `F.cross_entropy` apply `log_softmax` to their input themselves: they
expect **raw logits**. Passing softmax probabilities squashes the scores twice; the loss still
decreases, but gradients shrink as the model grows confident and accuracy plateaus below what
the model can reach. Return logits from the model and apply softmax only for reporting.
(Passing `log_softmax` output is mathematically harmless but redundant: it usually means
`NLLLoss` was intended.)
""",
)
def check_cross_entropy(ctx: LintContext, report: Reporter) -> None:
    for call, given, act, path in _losses(ctx, torchapi.CROSS_ENTROPY, lambda a: a.kind in (SOFTMAX, LOG_SOFTMAX)):
        if act is None or act.kind not in (SOFTMAX, LOG_SOFTMAX):
            continue
        severity = WARNING if act.kind == SOFTMAX else INFORMATION
        consequence = (
            "the scores are squashed twice and the gradients vanish as the model gets confident"
            if act.kind == SOFTMAX
            else "the extra log-softmax is redundant (did you mean NLLLoss?)"
        )
        report.report(
            given,
            f"{_loss_phrase(ctx, call, torchapi.CROSS_ENTROPY)} applies log-softmax itself, but its input "
            f"`{ctx.text(given)}` is {_origin(ctx, given, act)}{path}: {consequence}.",
            fix=_strip_fix(ctx, given, act, "CrossEntropyLoss takes raw logits"),
            severity=severity,
        )


@rule(
    "TD004",
    "sigmoid-before-bce-with-logits",
    "Sigmoid applied before BCEWithLogitsLoss",
    WARNING,
    """
`nn.BCEWithLogitsLoss` / `F.binary_cross_entropy_with_logits` apply the sigmoid themselves.
Feeding them `sigmoid(x)` squeezes every score into (0.5, 0.73): predictions can never become
confident, the loss stalls at a high value and the model looks like it "can't learn".
Pass the raw logits (or keep the sigmoid and switch to `BCELoss`, which is less stable).
""",
)
def check_bce_with_logits(ctx: LintContext, report: Reporter) -> None:
    for call, given, act, path in _losses(ctx, torchapi.BCE_LOGITS, lambda a: a.kind == SIGMOID):
        if act is None or act.kind != SIGMOID:
            continue
        report.report(
            given,
            f"{_loss_phrase(ctx, call, torchapi.BCE_LOGITS)} applies a sigmoid itself, but its input "
            f"`{ctx.text(given)}` is {_origin(ctx, given, act)}{path}: the sigmoid runs twice and the "
            f"predictions can never get confident.",
            fix=_strip_fix(ctx, given, act, "BCEWithLogitsLoss takes raw logits"),
        )


@rule(
    "TD006",
    "nll-without-log-softmax",
    "NLLLoss / F.nll_loss on scores that are not log-probabilities",
    WARNING,
    """
`nn.NLLLoss` / `F.nll_loss` only pick `-input[target]`: they expect **log-probabilities**
(`log_softmax` output). On raw logits the loss is unbounded below and the model learns to
inflate one logit; on softmax probabilities it maximises a probability linearly instead of
its log. Either apply `F.log_softmax(x, dim=1)` before `NLLLoss`, or use `CrossEntropyLoss`
on the logits.
""",
)
def check_nll(ctx: LintContext, report: Reporter) -> None:
    for call, given, act, path in _losses(ctx, torchapi.NLL, lambda a: a.kind in (LOGITS, SOFTMAX, SIGMOID)):
        if act is None or act.kind not in (LOGITS, SOFTMAX, SIGMOID):
            continue
        report.report(
            given,
            f"{_loss_phrase(ctx, call, torchapi.NLL)} expects log-probabilities, but its input "
            f"`{ctx.text(given)}` is {_origin(ctx, given, act)}{path}: apply `log_softmax` first or use "
            f"CrossEntropyLoss.",
            fix=_log_softmax_fix(ctx, given, act),
        )


def _loss_phrase(ctx: LintContext, call: ast.Call, kind: str) -> str:
    if ctx.qualname(call.func) in torchapi.LOSS_FUNCTIONS:
        return f"`{ctx.text(call.func)}`"
    return f"`{ctx.text(call.func)}` ({torchapi.LOSS_DISPLAY[kind]})"


def _origin(ctx: LintContext, given: ast.expr, act: Activation) -> str:
    """Say what the input is and, when it was made elsewhere, where."""
    words = _KIND_WORDS[act.kind]
    if act.node is given:
        return "already " + words if act.kind != LOGITS else words
    if act.origin is not None and act.origin is not ctx:
        where = f"{os.path.basename(act.origin.path or '?')} line {act.node.lineno}"
        return f"{words} (from `{_short(act.origin.text(act.node))}`, {where})"
    return f"{words} (from `{_short(ctx.text(act.node))}`, line {act.node.lineno})"


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _activation_input(ctx: LintContext, call: ast.expr) -> Optional[ast.expr]:
    """The tensor an inline activation call is applied to: ``F.softmax(x, 1)`` and
    ``x.softmax(1)`` -> ``x``; None for forms we do not rewrite."""
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    if ctx.qualname(func) is not None:
        if ctx.qualname(func) in ("torch.log",):
            return None
        return call.args[0] if call.args else None
    if ctx.class_of(func) is not None:  # a layer such as ``self.softmax = nn.Softmax(1)``
        return call.args[0] if len(call.args) == 1 and not call.keywords else None
    if isinstance(func, ast.Attribute) and func.attr in ("softmax", "log_softmax", "sigmoid"):
        return func.value  # the tensor method ``x.softmax(1)``
    return None


def _strip_fix(ctx: LintContext, given: ast.expr, act: Activation, why: str) -> Optional[Fix]:
    """Only an activation written inline in the loss call is removed: elsewhere the
    probabilities may also feed metrics or outputs."""
    if act.node is not given:
        return None
    inner = _activation_input(ctx, given)
    if inner is None:
        return None
    return replace_node(ctx.source, given, ctx.text(inner), f"Remove the {act.kind.replace('_', '-')}: {why}")


def _log_softmax_fix(ctx: LintContext, given: ast.expr, act: Activation) -> Optional[Fix]:
    """``F.nll_loss(F.softmax(x, 1), y)`` -> ``F.nll_loss(F.log_softmax(x, 1), y)``."""
    if act.node is not given or act.kind != SOFTMAX or not isinstance(given, ast.Call):
        return None
    func = given.func
    if not (isinstance(func, ast.Attribute) and func.attr == "softmax"):
        return None
    prefix = ctx.text(func.value)
    return replace_node(ctx.source, func, f"{prefix}.log_softmax", "Use log_softmax: NLLLoss takes log-probabilities")
