"""TD011: a scaler, encoder or imputer fitted on the whole data set before the train/test split,
or the whole array normalised with its own mean/std (or min/max) and then sliced into train/test.

Its statistics (means, variances, categories, fill values) then include the test rows: the
test score measures a model that has seen the test distribution, and it will not hold in
production. Split first, ``fit`` on the training part, ``transform`` both.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional, Set, Tuple

from ..context import LintContext, walk
from ..model import WARNING
from ..registry import Reporter, rule

_PREPROCESSORS = frozenset(
    {
        "StandardScaler",
        "MinMaxScaler",
        "RobustScaler",
        "MaxAbsScaler",
        "QuantileTransformer",
        "PowerTransformer",
        "OneHotEncoder",
        "OrdinalEncoder",
        "TargetEncoder",
        "SimpleImputer",
        "KNNImputer",
        "IterativeImputer",
        "KBinsDiscretizer",
        "SplineTransformer",
    }
)
_PREPROCESSING_MODULES = ("sklearn.preprocessing.", "sklearn.impute.", "sklearn.experimental.")
_SPLITTERS = frozenset({"sklearn.model_selection.train_test_split", "sklearn.cross_validation.train_test_split"})


@rule(
    "TD011",
    "fit-before-split",
    "Preprocessing fitted on all the data before the train/test split",
    WARNING,
    """
A scaler, encoder or imputer learns statistics in `fit` / `fit_transform`. Fitted on the whole
data set before `train_test_split`, those statistics include the test rows, so information
about the test set leaks into training: the test score is optimistic and will not be matched
in production. Split first, then `fit` on the training part only and `transform` the rest
(or put the preprocessing in a `sklearn.pipeline.Pipeline`).
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call in ctx.calls:
        fitted = _fitted_data(ctx, call)
        if fitted is None:
            continue
        data, result_name = fitted
        names = {ctx.text(data)} | ({result_name} if result_name else set()) | _transformed_names(ctx, call)
        split = _later_split(ctx, call, names)
        if split is None:
            continue
        report.report(
            call,
            f"`{ctx.text(call)}` learns its statistics from all of `{ctx.text(data)}`, which is split into train "
            f"and test later (line {split.lineno}): test rows leak into training. Split first, then fit on the "
            f"training part.",
        )
    check_whole_array_statistics(ctx, report)


_STATS = frozenset({"mean", "std", "var", "min", "max", "amin", "amax", "median", "nanmean", "nanstd"})
_ARRAY_LIBS = ("numpy.", "torch.")
_RANDOM_SPLITS = frozenset({"torch.utils.data.random_split"})


def check_whole_array_statistics(ctx: LintContext, report: Reporter) -> None:
    """``X = (X - X.mean(0)) / X.std(0)`` then ``X[:800]`` / ``X[800:]``: the same leakage
    written by hand."""
    for stmt in ctx.all_nodes(ast.Assign):  # from the index: a second walk of the tree cost as much as a parse
        if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        if "-" not in ctx.text(stmt.value):
            continue  # no subtraction in the source text, so no ``X - stat(X)``: skip the walk
        found = _self_normalised(ctx, stmt.value)
        if found is None:
            continue
        data, stat = found
        target = stmt.targets[0].id
        split = _later_slicing(ctx, stmt, {target, ctx.text(data)})
        if split is None:
            continue
        report.report(
            stat,
            f"`{ctx.text(stat)}` is computed over all rows of `{ctx.text(data)}`, which is split into train and test "
            f"later (line {split.lineno}): test rows leak into the normalisation. Compute the statistics on the "
            f"training rows and apply them to both.",
        )


def _self_normalised(ctx: LintContext, value: ast.AST) -> Optional[Tuple[ast.expr, ast.Call]]:
    """``(data, statistic call)`` when ``value`` subtracts from ``data`` a statistic of ``data``
    itself (directly or through a name bound to it)."""
    for node in walk(value):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
            continue
        data, stat = node.left, _statistic_of(ctx, node.right)
        if stat is not None and isinstance(data, (ast.Name, ast.Attribute)) and ctx.text(stat[0]) == ctx.text(data):
            return data, stat[1]
    return None


def _statistic_of(ctx: LintContext, given: ast.expr) -> Optional[Tuple[ast.expr, ast.Call]]:
    """``(array, call)`` for ``X.mean(0)``, ``np.mean(X, axis=0)``, ``torch.std(X)``, or a name bound to one."""
    expr: Optional[ast.expr] = given
    if isinstance(given, ast.Name):
        bound = ctx.binding(given)
        expr = bound.value if bound is not None and bound.kind == "assign" else None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    qual = ctx.qualname(func) or ""
    if qual.startswith(_ARRAY_LIBS) and qual.rsplit(".", 1)[-1] in _STATS and expr.args:
        return expr.args[0], expr
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _STATS
        and not qual
        and isinstance(func.value, (ast.Name, ast.Attribute))
    ):
        return func.value, expr
    return None


def _later_slicing(ctx: LintContext, stmt: ast.stmt, names: Set[str]) -> Optional[ast.expr]:
    """A split of one of ``names`` after ``stmt`` in its scope: a splitter call, or a head slice
    and a tail slice (``X[:n]`` and ``X[n:]``)."""
    scope = ctx.scope_of(stmt)
    after_line = stmt.end_lineno or stmt.lineno
    heads: Dict[str, ast.Subscript] = {}
    tails: Dict[str, ast.Subscript] = {}
    for node in walk(scope):
        if getattr(node, "lineno", 0) < after_line or ctx.scope_of(node) is not scope:
            continue
        if isinstance(node, ast.Call) and (ctx.qualname(node.func) in _SPLITTERS | _RANDOM_SPLITS):
            if any(_splits(ctx, a, names) for a in node.args):
                return node
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and ctx.text(node.value) in names:
            piece = node.slice
            if piece.lower is None and piece.upper is not None:
                heads[ctx.text(node.value)] = node
            elif piece.lower is not None and piece.upper is None:
                tails[ctx.text(node.value)] = node
    for name, head in heads.items():
        if name in tails:
            return head if head.lineno >= tails[name].lineno else tails[name]
    return None


def _fitted_data(ctx: LintContext, call: ast.Call) -> Optional[Tuple[ast.expr, Optional[str]]]:
    """``(data, name the result is stored in)`` for ``prep.fit(X)`` / ``X2 = prep.fit_transform(X)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("fit", "fit_transform") and call.args):
        return None
    if not _is_preprocessor(ctx, func.value):
        return None
    data = call.args[0]
    if not isinstance(data, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    stmt = ctx.statement_of(call)
    result = None
    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            result = target.id
    return data, result


def _transformed_names(ctx: LintContext, fit: ast.Call) -> Set[str]:
    """Names later assigned ``prep.transform(...)`` by the same preprocessor, in the same scope."""
    fitted = fit.func  # ``prep.fit``: an attribute (``_fitted_data`` checked it)
    prep = ctx.text(fitted.value if isinstance(fitted, ast.Attribute) else fitted)
    scope = ctx.scope_of(fit)
    names: Set[str] = set()
    for call in ctx.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "transform" and ctx.text(func.value) == prep):
            continue
        stmt = ctx.statement_of(call)
        if (
            isinstance(stmt, ast.Assign)
            and stmt.value is call
            and ctx.scope_of(call) is scope
            and (call.lineno, call.col_offset) > (fit.lineno, fit.col_offset)
        ):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return names


def _is_preprocessor(ctx: LintContext, expr: ast.expr) -> bool:
    cls = ctx.class_of(expr) or (ctx.callee_class(expr) if isinstance(expr, ast.Call) else None)
    if not cls:
        return False
    name = cls.rsplit(".", 1)[-1]
    return name in _PREPROCESSORS and cls.startswith(_PREPROCESSING_MODULES)


def _later_split(ctx: LintContext, fit: ast.Call, names: set) -> Optional[ast.Call]:
    """A ``train_test_split`` after ``fit``, in the same scope, splitting the fitted data."""
    scope = ctx.scope_of(fit)
    at = (fit.end_lineno, fit.end_col_offset)
    for call in ctx.calls:
        if (call.lineno, call.col_offset) <= at or ctx.qualname(call.func) not in _SPLITTERS:
            continue
        if ctx.scope_of(call) is not scope:
            continue
        if any(_splits(ctx, arg, names) for arg in call.args):
            return call
    return None


def _splits(ctx: LintContext, arg: ast.expr, names: Set[str]) -> bool:
    """A splitter's argument is one of ``names``, or a dataset built from one
    (``random_split(TensorDataset(x, y), ...)``)."""
    if ctx.text(arg) in names:
        return True
    return isinstance(arg, ast.Call) and any(ctx.text(a) in names for a in arg.args)
