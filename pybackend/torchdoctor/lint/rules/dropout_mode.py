"""TD016: dropout in a module's ``forward`` that ``model.eval()`` cannot turn off.

``F.dropout(x, p)`` defaults to ``training=True`` whatever mode the module is in, and an
``nn.Dropout(p)(x)`` built inside ``forward`` is a fresh module in training mode on every
call. Both keep dropping activations at evaluation time: predictions are noisy and metrics
worse than the model deserves. Reported by users in many repositories (see docs/rules.md).
"""

from __future__ import annotations

import ast
from typing import List, Optional

from ..context import LintContext
from ..fixes import add_keyword
from ..model import WARNING, Fix
from ..registry import Reporter, rule

_FUNCTIONAL = frozenset(
    "torch.nn.functional." + n
    for n in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
)
_MODULES = frozenset(
    "torch.nn." + n for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")
)


@rule(
    "TD016",
    "dropout-ignores-eval",
    "Functional dropout that stays active after model.eval()",
    WARNING,
    """
`F.dropout(x, p)` has its own `training` argument, **defaulting to `True`**; it does not look at
the module's mode. Inside `forward`, it keeps dropping activations after `model.eval()`, so
validation metrics are noisy and pessimistic and inference is non-deterministic. Pass
`training=self.training`, or use an `nn.Dropout` layer created in `__init__`. (An
`nn.Dropout(p)(x)` created inside `forward` has the same problem: it is a new module, in
training mode, on every call.)
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call in _candidates(ctx):
        qual = ctx.qualname(call.func)
        inline_module = isinstance(call.func, ast.Call) and ctx.callee_class(call.func) in _MODULES
        if qual not in _FUNCTIONAL and not inline_module:
            continue
        method = _module_method(ctx, call)
        if method is None:
            continue
        self_name = method.args.args[0].arg
        if _only_when_training(ctx, call, method, self_name):
            continue  # ``if self.training and p > 0: x = F.dropout(x, p)``: off after ``.eval()``
        if qual in _FUNCTIONAL:
            if any(k.arg == "training" or k.arg is None for k in call.keywords) or len(call.args) >= 3:
                continue  # an explicit choice, even ``training=True`` (MC dropout), is respected
            report.report(
                call,
                f"`{ctx.text(call.func)}(...)` in `{method.name}` defaults to `training=True`: it keeps dropping "
                f"activations after `.eval()`. Pass `training={self_name}.training`.",
                fix=_fix(ctx, call, self_name),
            )
        else:
            report.report(
                call.func,
                f"`{ctx.text(call.func)}` is created inside `{method.name}`: a new dropout module in training mode "
                f"on every call, which `.eval()` never reaches. Create it once in `__init__`.",
            )


def _candidates(ctx: LintContext) -> List[ast.Call]:
    """The calls that may be a functional dropout or run an inline dropout module, in file order:
    those named like a dropout function or an import (a qualified name ends in the callee's last
    name, or is an import's), and those calling a dropout module's construction. Not every call
    of the file asked its qualified name (51k calls in a 32k-line script)."""
    if ctx.star_imports:  # a bare name may be torch's through ``from utils import *``
        return ctx.calls
    names = [qual.rpartition(".")[2] for qual in _FUNCTIONAL] + list(ctx.imports.aliases)
    found = set(ctx.calls_named_any(names))
    for built in ctx.calls_of_class(_MODULES):
        outer = ctx.parents.get(built)
        if isinstance(outer, ast.Call) and outer.func is built:
            found.add(outer)
    return [call for call in ctx.calls if call in found] if found else []


def _module_method(ctx: LintContext, call: ast.Call):
    """The method of an ``nn.Module`` subclass that ``call`` runs in, if any."""
    func = ctx.enclosing_function(call)
    if func is None or not func.args.args:
        return None
    owner = ctx.enclosing_class(func)
    if owner is None or not ctx.is_module_class(owner):
        return None
    return func


def _only_when_training(ctx: LintContext, call: ast.Call, method: ast.AST, self_name: str) -> bool:
    """Whether ``call`` runs only while ``self.training`` is true: inside the true branch of an
    ``if`` (or conditional expression) whose test requires it (``self.training``, ``self.training
    and p > 0``), or the false branch of one whose test is ``not self.training``."""
    child: ast.AST = call
    for anc in ctx.ancestors(call):
        if anc is method:
            return False
        if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
            in_body = child in anc.body if isinstance(anc, ast.If) else child is anc.body
            if _requires_training(anc.test, self_name, not in_body):
                return True
        child = anc
    return False


def _requires_training(test: ast.expr, self_name: str, negated: bool) -> bool:
    """Whether ``test`` being true (false when ``negated``) implies ``<self>.training`` is true."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _requires_training(test.operand, self_name, not negated)
    if isinstance(test, ast.BoolOp):
        # ``a and b`` true needs both; ``a or b`` false needs both false (``not training or ...``)
        if isinstance(test.op, ast.And) and not negated or isinstance(test.op, ast.Or) and negated:
            return any(_requires_training(v, self_name, negated) for v in test.values)
        return False
    is_flag = (
        isinstance(test, ast.Attribute)
        and test.attr == "training"
        and isinstance(test.value, ast.Name)
        and test.value.id == self_name
    )
    return is_flag and not negated


def _fix(ctx: LintContext, call: ast.Call, self_name: str) -> Optional[Fix]:
    return add_keyword(ctx.source, call, f"training={self_name}.training", f"Pass `training={self_name}.training`")
