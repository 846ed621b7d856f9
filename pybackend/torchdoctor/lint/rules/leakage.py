"""TD011: a scaler, encoder or imputer fitted on the whole data set before the train/test split,
or the whole array normalised with its own mean/std (or min/max) and then sliced or split.

Its statistics (means, variances, categories, fill values) then include the test rows: the
test score measures a model that has seen the test distribution, and it will not hold in
production. Split first, ``fit`` on the training part, ``transform`` both. The same leak
written after the split: the parts normalised with the whole array's statistics
(``np.mean(X)`` where ``np.mean(X_train)`` was meant), or a scaler fitted on the whole array
and used to transform the parts.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

from ..context import LintContext, walk
from ..datasplits import (
    CONVERTING_METHODS,
    END,
    Data,
    end_position,
    follow_derived,
    index_origin,
    last_name,
    part_of_split,
    row_slice,
    split_by_callers,
    split_of,
    split_origin,
)
from ..model import WARNING
from ..registry import Reporter, rule

_PREPROCESSORS = frozenset(
    "StandardScaler MinMaxScaler RobustScaler MaxAbsScaler QuantileTransformer PowerTransformer OneHotEncoder "
    "OrdinalEncoder TargetEncoder SimpleImputer KNNImputer IterativeImputer KBinsDiscretizer SplineTransformer".split()
)
_PREPROCESSING_MODULES = ("sklearn.preprocessing.", "sklearn.impute.", "sklearn.experimental.")


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
    for call in ctx.calls_named("fit") + ctx.calls_named("fit_transform"):  # from the callee index
        fitted = _fitted_data(ctx, call)
        if fitted is not None:
            _check_fit(ctx, report, call, fitted)
    check_whole_array_statistics(ctx, report)


# -- preprocessors fitted on the whole data --------------------------------------------------


def _check_fit(ctx: LintContext, report: Reporter, call: ast.Call, fitted: Tuple[ast.expr, Optional[str]]) -> None:
    data, result = fitted
    scope = ctx.scope_of(call)
    rejoined = _rejoined_split(ctx, data)
    if rejoined is not None:
        report.report(
            call,
            f"`{_short(ctx.text(call))}` learns its statistics from the training and test parts put back together "
            f"(split on line {rejoined.lineno}): test rows leak into training. Fit on the training part.",
        )
        return
    made = follow_derived(ctx, _fitted_or_made(ctx, call, data, result), scope, end_position(call))
    split = split_of(ctx, scope, made, end_position(call), END)
    if split is None and not _training_part(ctx, data):  # ``return scaler.fit_transform(rows)``
        split = split_by_callers(ctx, scope, made, _producers(ctx, call))
    if split is not None:
        report.report(
            call,
            f"`{_short(ctx.text(call))}` learns its statistics from all of `{_short(ctx.text(data))}`, which is split "
            f"into train and test later (line {split.lineno}): test rows leak into training. Split first, then fit "
            f"on the training part.",
        )
        return
    if not _transforms_other(ctx, call, data):
        return
    split = split_of(ctx, scope, _whole_data(ctx, data), (0, 0), END)
    if split is not None:
        report.report(
            call,
            f"`{_short(ctx.text(call))}` learns its statistics from all of `{_short(ctx.text(data))}`, which is "
            f"split into train and test on line {split.lineno}, and the parts are transformed with it: test rows "
            f"leak into training. Fit on the training part.",
        )


def _fitted_or_made(ctx: LintContext, fit: ast.Call, data: ast.expr, result: Optional[str]) -> Data:
    """What must not be split after ``fit``: its ``fit_transform`` result, or (for ``fit``) the
    fitted data itself; and whatever the preprocessor transforms later."""
    stmt = ctx.statement_of(fit)
    in_place = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _same_table(ctx, stmt.targets[0], data)
    made = Data(ctx, {result}, {stmt}) if result else _whole_data(ctx, data, table=in_place)
    part = _training_part(ctx, data)
    for name, stmt, given_data in _transforms(ctx, fit):
        # fitted on the training rows, the scaler may transform anything: ``X = scaler.transform(X)``
        # after ``scaler.fit(X[:n])`` is the correct order. Only its own data stays followed.
        if not part or ctx.text(_unconverted(given_data)) == ctx.text(data):
            made.names.add(name)
            made.sources.add(stmt)
    return made


def _producers(ctx: LintContext, fit: ast.Call) -> FrozenSet[ast.AST]:
    """The fit call and its preprocessor's later ``transform`` calls in the same scope: what a
    helper returning one of them hands its caller is the data the fit saw, made over."""
    prep, scope = _prep_of(ctx, fit), ctx.scope_of(fit)
    later = [
        c
        for c in ctx.calls_named("transform")
        if isinstance(c.func, ast.Attribute) and ctx.text(c.func.value) in prep and ctx.scope_of(c) is scope
    ]
    return frozenset([fit, *later])


def _same_table(ctx: LintContext, target: ast.expr, data: ast.expr) -> bool:
    """``X = prep.fit_transform(X)``, or the columns of a table written back into it:
    ``df["Close"] = scaler.fit_transform(df[["Close"]])``."""
    if ctx.text(target) == ctx.text(data):
        return True
    return (
        isinstance(target, ast.Subscript)
        and isinstance(data, ast.Subscript)
        and ctx.text(target.value) == ctx.text(data.value)
    )


def _training_part(ctx: LintContext, data: ast.expr) -> bool:
    """Whether ``data`` is a part of the rows, not the whole: a row slice (``X[:n]``,
    ``prices[:split]``), a name holding one or a part of a split (``train = data[:n]``,
    ``X_train`` of ``train_test_split``), the rows an index from a split picks (``X[train_idx]``
    with ``train_idx`` a side of ``train_test_split(np.arange(n))`` or of ``perm[:n]``, and
    ``X[perm[:n]]``), or a name that says so (``train_df``)."""
    if isinstance(data, ast.Subscript) and (row_slice(data) is not None or index_origin(ctx, data) is not None):
        return True
    if isinstance(data, ast.Name) and split_origin(ctx, data) is not None:
        return True
    spelled = data.value if isinstance(data, ast.Subscript) else data
    return isinstance(spelled, (ast.Name, ast.Attribute)) and "train" in last_name(spelled).lower()


def _whole_data(ctx: LintContext, data: ast.expr, table: bool = False) -> Data:
    """``data`` as it is where it is read. With ``table``, a selection updated in place stands
    for its table too: ``df[cols] = scaler.fit_transform(df[cols])`` then ``train_test_split(df)``
    (only in place: ``scaler.fit(X[fold_rows])`` is not ``X``)."""
    names, sources = {ctx.text(data)}, _sources_of(ctx, data)
    if table and isinstance(data, ast.Subscript) and isinstance(data.value, (ast.Name, ast.Attribute)):
        names.add(ctx.text(data.value))
        sources |= _sources_of(ctx, data.value)
    return Data(ctx, names, sources)


# Functions that put arrays or tables back together row-wise.
_JOINS = frozenset({"concatenate", "vstack", "row_stack", "cat", "concat"})


def _rejoined_split(ctx: LintContext, data: ast.expr) -> Optional[ast.expr]:
    """The split whose parts ``data`` puts back together (``np.concatenate([X_train, X_test])``,
    ``pd.concat([df_train, df_test])``): fitting on it is fitting on the whole."""
    if not (isinstance(data, ast.Call) and isinstance(data.func, (ast.Name, ast.Attribute)) and data.args):
        return None
    if last_name(data.func) not in _JOINS or not isinstance(data.args[0], (ast.List, ast.Tuple)):
        return None
    sides: Dict[str, Set[object]] = {}
    splits: Dict[str, ast.expr] = {}
    for elt in data.args[0].elts:
        origin = split_origin(ctx, elt) if isinstance(elt, ast.Name) else None
        if origin is not None:
            key, side, split = origin
            sides.setdefault(key, set()).add(side)
            splits[key] = split
    return next((splits[key] for key, seen in sides.items() if len(seen) > 1), None)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sources_of(ctx: LintContext, data: ast.expr) -> Set[ast.AST]:
    """The statement that made ``data`` where it is read (nothing to compare for attributes)."""
    bound = ctx.binding(data) if isinstance(data, ast.Name) else None
    return {bound.stmt} if bound is not None else set()


def _fitted_data(ctx: LintContext, call: ast.Call) -> Optional[Tuple[ast.expr, Optional[str]]]:
    """``(data, name the result is stored in)`` for ``prep.fit(X)`` / ``X2 = prep.fit_transform(X)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("fit", "fit_transform") and call.args):
        return None
    if not _is_preprocessor(ctx, func.value):
        return None
    data = _unconverted(call.args[0])
    if not isinstance(data, (ast.Name, ast.Attribute, ast.Subscript)) and _rejoined_split(ctx, data) is None:
        return None
    stmt = ctx.statement_of(call)
    result = None
    if func.attr == "fit_transform" and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and _is_or_wraps(stmt.value, call):
            result = target.id
    return data, result


def _unconverted(expr: ast.expr) -> ast.expr:
    """The array under conversions: ``prices`` of ``prices.reshape(-1, 1)``, ``df`` of ``df.values``."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in CONVERTING_METHODS:
            expr = expr.func.value
        elif isinstance(expr, ast.Attribute) and expr.attr in ("values", "T"):
            expr = expr.value
        else:
            return expr


def _is_or_wraps(value: ast.expr, call: ast.Call) -> bool:
    """``value`` is ``call`` or a conversion of its result (``prep.fit_transform(X).astype(...)``)."""
    while value is not call and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        value = value.func.value
    return value is call


def _prep_of(ctx: LintContext, fit: ast.Call) -> Set[str]:
    """How the fitted preprocessor is spelled afterwards: its receiver, and the name the fit is
    assigned to (``scaler = StandardScaler().fit(X)``: ``fit`` returns the preprocessor)."""
    fitted = fit.func
    names = {ctx.text(fitted.value if isinstance(fitted, ast.Attribute) else fitted)}
    stmt = ctx.statement_of(fit)
    if (
        isinstance(fitted, ast.Attribute)
        and fitted.attr == "fit"
        and isinstance(stmt, ast.Assign)
        and stmt.value is fit
    ):
        names.update(ctx.text(t) for t in stmt.targets if isinstance(t, (ast.Name, ast.Attribute)))
    return names


def _transforms(ctx: LintContext, fit: ast.Call) -> List[Tuple[str, ast.stmt, ast.expr]]:
    """``(name, statement, data transformed)`` of each later ``name = prep.transform(data)`` by
    the same preprocessor, in the same scope."""
    prep, scope = _prep_of(ctx, fit), ctx.scope_of(fit)
    found: List[Tuple[str, ast.stmt, ast.expr]] = []
    for call in ctx.calls_named("transform"):
        func = call.func
        if not (isinstance(func, ast.Attribute) and ctx.text(func.value) in prep):
            continue
        stmt = ctx.statement_of(call)
        if (
            isinstance(stmt, ast.Assign)
            and _is_or_wraps(stmt.value, call)
            and ctx.scope_of(call) is scope
            and (call.lineno, call.col_offset) > (fit.lineno, fit.col_offset)
            and call.args
        ):
            found.extend((t.id, stmt, call.args[0]) for t in stmt.targets if isinstance(t, ast.Name))
    return found


def _transforms_other(ctx: LintContext, fit: ast.Call, data: ast.expr) -> bool:
    """Whether the fitted preprocessor later transforms something other than ``data`` (the parts)."""
    prep, scope = _prep_of(ctx, fit), ctx.scope_of(fit)
    for call in ctx.calls_named("transform"):
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and ctx.text(func.value) in prep
            and ctx.scope_of(call) is scope
            and (call.lineno, call.col_offset) > (fit.lineno, fit.col_offset)
            and call.args
            and ctx.text(call.args[0]) != ctx.text(data)
        ):
            return True
    return False


def _is_preprocessor(ctx: LintContext, expr: ast.expr) -> bool:
    cls = ctx.class_of(expr) or (ctx.callee_class(expr) if isinstance(expr, ast.Call) else None)
    if not cls:
        return False
    name = cls.rsplit(".", 1)[-1]
    return name in _PREPROCESSORS and cls.startswith(_PREPROCESSING_MODULES)


# -- statistics written by hand -------------------------------------------------------------

_STATS = frozenset({"mean", "std", "var", "min", "max", "amin", "amax", "median", "nanmean", "nanstd"})
_ARRAY_LIBS = ("numpy.", "torch.")


def check_whole_array_statistics(ctx: LintContext, report: Reporter) -> None:
    """``X = (X - X.mean(0)) / X.std(0)`` (or ``X -= X.mean(0)``) then ``X[:800]`` / ``X[800:]``;
    or, after the split, ``X_train - X.mean(0)``: the same leakage written by hand."""
    # from the index: a second walk of the tree cost as much as a parse
    subtracted = [a for a in ctx.all_nodes(ast.AugAssign) if isinstance(a.op, ast.Sub)]
    for stmt in ctx.all_nodes(ast.Assign) + subtracted:
        lines = range(stmt.lineno - 1, stmt.end_lineno or stmt.lineno)
        if not any("-" in ctx.source.line(i) for i in lines):
            continue  # no minus sign on its lines, so no ``X - stat(X)``: skip the walk
        for part, data, stat in _subtractions(ctx, stmt):
            if part is None:
                _report_normalised_then_split(ctx, report, stmt, data, stat)
            else:
                _report_part_normalised_with_whole(ctx, report, part, data, stat)


def _subtractions(
    ctx: LintContext, stmt: Union[ast.Assign, ast.AugAssign]
) -> List[Tuple[Optional[ast.expr], ast.expr, ast.Call]]:
    """``(None, data, stat)`` for ``data - stat(data)``; ``(part, data, stat)`` for
    ``part - stat(data)`` with ``part`` another name or attribute."""
    found: List[Tuple[Optional[ast.expr], ast.expr, ast.Call]] = []
    pairs: List[Tuple[ast.expr, ast.expr]]
    if isinstance(stmt, ast.AugAssign):
        pairs = [(stmt.target, stmt.value)] if isinstance(stmt.op, ast.Sub) else []
    else:
        pairs = [(n.left, n.right) for n in walk(stmt.value) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)]
    for left, right in pairs:
        stat = _statistic_of(ctx, right)
        if stat is None:
            continue
        data, call = stat
        if ctx.text(data) == ctx.text(left):  # ``df[num] - df[num].mean()`` too
            found.append((None, data, call))
        elif isinstance(left, (ast.Name, ast.Attribute)):
            found.append((left, data, call))
    return found


def _report_normalised_then_split(
    ctx: LintContext, report: Reporter, stmt: Union[ast.Assign, ast.AugAssign], data: ast.expr, stat: ast.Call
) -> None:
    target = stmt.target if isinstance(stmt, ast.AugAssign) else stmt.targets[0] if len(stmt.targets) == 1 else None
    if isinstance(target, ast.Subscript):  # ``df[cols] = (df[cols] - df[cols].mean()) / ...``: ``df`` changed
        normalised = _whole_data(ctx, target, table=True)
    elif isinstance(target, (ast.Name, ast.Attribute)):
        normalised = Data(ctx, {ctx.text(target)}, {stmt})
    else:
        return
    scope = ctx.scope_of(stmt)
    made = follow_derived(ctx, normalised, scope, end_position(stmt))
    split = split_of(ctx, scope, made, end_position(stmt), END) or split_by_callers(ctx, scope, made)
    if split is not None:
        report.report(
            stat,
            f"`{ctx.text(stat)}` is computed over all rows of `{ctx.text(data)}`, which is split into train and test "
            f"later (line {split.lineno}): test rows leak into the normalisation. Compute the statistics on the "
            f"training rows and apply them to both.",
        )


def _report_part_normalised_with_whole(
    ctx: LintContext, report: Reporter, part: ast.expr, data: ast.expr, stat: ast.Call
) -> None:
    """``X_train - X.mean(0)`` where ``X_train`` is a part of a split of ``X``."""
    if not (isinstance(part, ast.Name) and isinstance(data, ast.Name)):
        return
    whole = Data(ctx, {data.id}, _sources_of(ctx, data))
    split = split_of(ctx, ctx.scope_of(stat), whole, (0, 0), (stat.lineno, stat.col_offset))
    if split is None or not part_of_split(ctx, part, whole):
        return
    report.report(
        stat,
        f"`{ctx.text(stat)}` is computed over all rows of `{data.id}`, which is split into train and test on line "
        f"{split.lineno}, and `{part.id}` is normalised with it: test rows leak into the normalisation. Compute "
        f"the statistics on the training rows and apply them to both.",
    )


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
        return (expr.args[0], expr) if _over_rows(expr, 1) else None
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _STATS
        and not qual
        and isinstance(func.value, (ast.Name, ast.Attribute, ast.Subscript))
    ):
        return (func.value, expr) if _over_rows(expr, 0) else None
    return None


def _over_rows(call: ast.Call, position: int) -> bool:
    """Whether the statistic mixes rows: over everything (no axis, ``axis=None``), over axis 0
    or over axes that include 0. ``X.mean(axis=1, keepdims=True)`` or
    ``x.mean(dim=(1, 2, 3))`` normalises each sample on its own: no test row reaches another.
    An axis not written as a constant is taken to include 0. ``position``: where the axis goes
    when passed positionally (``X.mean(1)``, ``np.mean(X, 1)``)."""
    axis = next((k.value for k in call.keywords if k.arg in ("axis", "dim")), None)
    if axis is None and len(call.args) > position:
        axis = call.args[position]
    if axis is None:
        return True
    axes = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else [axis]
    for one in axes:
        if not isinstance(one, ast.Constant) or one.value in (None, 0, "index", "rows"):
            return True
    return False
