"""TD005: binary cross-entropy trained on multi-class integer labels.

BCE reads each target value as the probability that "the" class is true. Class indices 2, 3,
... are then targets above 1 (or, one-hot encoded, independent yes/no questions for classes
that are mutually exclusive): the loss is finite, decreases, and optimises the wrong thing.
"""

from __future__ import annotations

import ast
from typing import Optional

from .. import torchapi
from ..context import LintContext
from ..model import WARNING
from ..registry import Reporter, rule

# Conversions that keep the label values (what matters here) unchanged.
_KEEPS_VALUES = frozenset(
    {
        "float",
        "double",
        "half",
        "to",
        "unsqueeze",
        "view",
        "reshape",
        "type",
        "squeeze",
        "long",
        "int",
        "flatten",
        "type_as",
        "cuda",
        "cpu",
    }
)
_MAX_DEPTH = 10


@rule(
    "TD005",
    "bce-with-multiclass-labels",
    "Binary cross-entropy used with multi-class integer labels",
    WARNING,
    """
`BCELoss` / `BCEWithLogitsLoss` answer one yes/no question per output. With labels that are
class indices (0, 1, 2, ...) a label of 2 becomes a "probability" of 2, and one-hot encoding
mutually exclusive classes turns one choice into independent yes/no questions. Nothing
crashes and the loss goes down, but the model is trained for the wrong task. For one class
out of C, use `CrossEntropyLoss` with integer class indices and C output logits.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call, kind, _, target in torchapi.loss_calls(ctx):
        if kind not in (torchapi.BCE, torchapi.BCE_LOGITS) or target is None:
            continue
        origin = _multiclass_origin(ctx, target)
        if origin is None:
            continue
        name = "`" + ctx.text(call.func) + "`"
        if ctx.qualname(call.func) not in torchapi.LOSS_FUNCTIONS:
            name += f" ({torchapi.LOSS_DISPLAY[kind]})"
        report.report(
            target,
            f"{name} is a binary loss, but its target `{ctx.text(target)}` holds {origin}: "
            f"use CrossEntropyLoss with class indices for one-of-C classification.",
        )


def _multiclass_origin(ctx: LintContext, expr: Optional[ast.AST], depth: int = 0) -> Optional[str]:
    """Describe ``expr`` when it is visibly built from more than two integer classes."""
    if expr is None or depth > _MAX_DEPTH:
        return None
    if isinstance(expr, (ast.Name, ast.Attribute)) and not isinstance(expr, ast.Call):
        value = ctx.value_of(expr)
        if value is None or value is expr:
            return None
        return _multiclass_origin(ctx, value, depth + 1)
    if not isinstance(expr, ast.Call):
        return None
    qual = ctx.qualname(expr.func)
    if qual is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEPS_VALUES:
        return _multiclass_origin(ctx, expr.func.value, depth + 1)
    if qual == "torch.randint":
        return _randint_origin(expr)
    if qual == "torch.nn.functional.one_hot":
        return _one_hot_origin(expr)
    if qual in ("torch.tensor", "torch.as_tensor", "torch.LongTensor") and expr.args:
        return _literal_origin(expr.args[0])
    return None


def _int(node: Optional[ast.AST]) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _randint_origin(call: ast.Call) -> Optional[str]:
    kwargs = {k.arg: k.value for k in call.keywords}
    if "low" in kwargs or "high" in kwargs:
        low, high = _int(kwargs.get("low", ast.Constant(0))), _int(kwargs.get("high"))
    elif len(call.args) >= 3:
        low, high = _int(call.args[0]), _int(call.args[1])
    elif len(call.args) == 2:
        low, high = 0, _int(call.args[0])
    else:
        return None
    if low is None or high is None or high - low <= 2:
        return None
    return f"{high - low} integer classes (`torch.randint` in [{low}, {high}), line {call.lineno})"


def _one_hot_origin(call: ast.Call) -> Optional[str]:
    classes = _int(call.args[1]) if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "num_classes":
            classes = _int(kw.value)
    if classes is not None and classes <= 2:
        return None
    count = f"{classes} " if classes is not None else ""
    return f"one-hot encoded labels of {count}mutually exclusive classes (`F.one_hot`, line {call.lineno})"


def _literal_origin(node: ast.expr) -> Optional[str]:
    found = [_int(e) for e in getattr(node, "elts", [])]
    values = [v for v in found if v is not None]
    if not values or len(values) < len(found):
        return None
    if max(values) <= 1 or min(values) < 0:
        return None
    return f"integer class labels up to {max(values)} (line {node.lineno})"
