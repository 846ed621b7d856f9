"""Train/test splits in one file, and which expressions hold the data being split.

For TD011 (data leakage): whether the data a scaler was fitted on, or an array normalised with
its own statistics, is split into train and test later (or was split before). A split is a
splitter call (``train_test_split``, ``random_split``) or complementary row slices (``X[:n]``
with ``X[n:]``). "The same data" follows a name through conversions and in-place updates
(``torch.tensor(X)``, ``X /= 255``) and into what a function of the file makes from it, but
not through a rebinding to other data.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

from .bindings import Binding
from .context import LintContext, walk

SPLITTERS = frozenset(
    {
        "sklearn.model_selection.train_test_split",
        "sklearn.cross_validation.train_test_split",
        "torch.utils.data.random_split",
    }
)


# -- which expressions hold the same data ------------------------------------------------------

# Calls and methods that convert an array without changing its rows (``torch.tensor(X)``,
# ``X.astype(np.float32)``, ``torch.stack(windows)`` of a list of rows): the result is the same data.
CONVERTERS = frozenset(
    "tensor from_numpy as_tensor Tensor FloatTensor DoubleTensor array asarray ascontiguousarray DataFrame "
    "stack vstack".split()
)
CONVERTING_METHODS = frozenset(
    "astype float double half to type cpu cuda numpy to_numpy reshape view unsqueeze squeeze copy clone "
    "set_index reset_index drop dropna fillna sort_index rename".split()  # pandas: the same table
)
MAX_STEPS = 8  # rebindings followed back from a split to the statement that made the data


class Data:
    """Which expressions hold one piece of data: those spelled like one of ``names``; for a plain
    name, only while it holds a value made by one of ``sources`` (through in-place updates and
    conversions: ``X /= 2``, ``X = torch.tensor(X)``). ``X = other_table.values`` between the
    fit and the split is other data."""

    def __init__(self, ctx: LintContext, names: Set[str], sources: Set[ast.AST]) -> None:
        self.ctx, self.names, self.sources = ctx, names, sources

    def __call__(self, expr: ast.expr) -> bool:
        if self.ctx.text(expr) not in self.names:
            return False
        if not isinstance(expr, ast.Name):
            return True
        bound: Optional[Binding] = self.ctx.binding(expr)
        if bound is None:
            return True  # nothing known about the name: its spelling decides
        for _ in range(MAX_STEPS):
            if bound.stmt in self.sources:
                return True
            bound = carried_from(self.ctx, expr, bound)
            if bound is None:
                return False
        return False


def carried_from(ctx: LintContext, name: ast.Name, bound: Binding) -> Optional[Binding]:
    """The binding ``bound`` updates or converts (``X -= m``, ``X = X.astype(...)``,
    ``X = (X - m) / s``: the same rows), else None."""
    if bound.kind == "aug" or (
        bound.kind == "assign" and (_converts(ctx, bound.value, name.id) or _arithmetic_on(bound.value, name.id))
    ):
        stmt = bound.stmt
        if isinstance(stmt, ast.stmt):
            earlier = ctx.bindings.lookup(name.id, ctx.scope_chain(stmt), (stmt.lineno, stmt.col_offset))
            return earlier if earlier is not bound else None
    return None


def _converts(ctx: LintContext, value: Optional[ast.expr], name: str) -> bool:
    node = value
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Attribute):
            if node.attr not in ("values", "data", "T") and not isinstance(ctx.parents.get(node), ast.Call):
                return False
            node = node.value
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in CONVERTING_METHODS and not ctx.qualname(func):
            node = func.value
        elif isinstance(func, (ast.Name, ast.Attribute)) and last_name(func) in CONVERTERS and node.args:
            node = node.args[0]
        else:
            return False
    return isinstance(node, ast.Name) and node.id == name


def _arithmetic_on(value: Optional[ast.expr], name: str) -> bool:
    """``value`` is arithmetic with ``name`` as one of its operands (``(X - m) / s``, ``X / 255``)."""
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp):
            pending += [node.left, node.right]
        elif isinstance(node, ast.Name) and node.id == name and node is not value:
            return True
    return False


def last_name(func: Union[ast.Name, ast.Attribute]) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr


def follow_derived(ctx: LintContext, data: Data, scope: ast.AST, after: Tuple[int, int]) -> Data:
    """``data`` grown by the names later made from it in ``scope``, in source order:
    ``X_t = torch.tensor(X_scaled)``, ``X, y = make_windows(prices_scaled, 30)`` (a function of
    this file given the data: its windows hold the scaled rows), and lists that a loop fills
    with its rows (``xs.append(prices_scaled[i : i + 30])``, then ``xs = np.array(xs)``)."""
    _follow_assignments(ctx, data, scope, after)
    if _follow_appends(ctx, data, scope, after):
        _follow_assignments(ctx, data, scope, after)  # ``X_t = torch.tensor(xs)`` after the loop
    return data


def _follow_appends(ctx: LintContext, data: Data, scope: ast.AST, after: Tuple[int, int]) -> bool:
    """Adds each list that ``.append``/``.extend`` fills with rows of ``data`` (a subscript of
    it: ``series[i : i + w]``, ``df.Close[i : i + w]``) after ``after``; whether any was."""
    grown = False
    for expr in ctx.own_nodes(scope, ast.Expr):
        call = expr.value
        if (expr.lineno, expr.col_offset) <= after or not isinstance(call, ast.Call) or len(call.args) != 1:
            continue
        func = call.func
        if not (
            isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and isinstance(func.value, ast.Name)
        ):
            continue
        bound = ctx.binding(func.value)  # the list's ``xs = []``, which its later conversions lead back to
        if bound is not None and bound.stmt not in data.sources and _holds_rows_of(call.args[0], data):
            data.names.add(func.value.id)
            data.sources.add(bound.stmt)
            grown = True
    return grown


def _holds_rows_of(expr: ast.expr, data: Data) -> bool:
    """Whether ``expr`` takes rows of ``data``: a subscript of it, or of a column of it."""
    for node in walk(expr):
        if isinstance(node, ast.Subscript):
            base: ast.expr = node.value
            while True:
                if data(base):
                    return True
                if not isinstance(base, ast.Attribute):
                    break
                base = base.value  # ``df.Close[i:j]``, ``df.iloc[i:j]``: rows of ``df``
    return False


def _follow_assignments(ctx: LintContext, data: Data, scope: ast.AST, after: Tuple[int, int]) -> None:
    for stmt in ctx.own_nodes(scope, ast.Assign):
        if (stmt.lineno, stmt.col_offset) <= after or not isinstance(stmt.value, ast.Call):
            continue
        if _derives(ctx, stmt.value, data):
            for target in stmt.targets:
                for name in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(name, ast.Name):
                        data.names.add(name.id)
                        data.sources.add(stmt)


def _derives(ctx: LintContext, call: ast.Call, data: Data) -> bool:
    func = call.func
    if ctx.local_function_called(call) is not None:
        return any(data(arg) for arg in call.args)
    node: ast.expr = call
    while isinstance(node, ast.Call):  # ``torch.tensor(seqs).float()``: conversions in a chain
        func = node.func
        if isinstance(func, (ast.Name, ast.Attribute)) and last_name(func) in CONVERTERS and node.args:
            node = node.args[0]
        elif isinstance(func, ast.Attribute) and func.attr in CONVERTING_METHODS:
            node = func.value
        else:
            return False
    return node is not call and data(node)


def split_by_callers(
    ctx: LintContext, scope: ast.AST, made: Data, producers: FrozenSet[ast.AST] = frozenset()
) -> Optional[ast.expr]:
    """When ``scope`` is a function of this file that returns ``made`` (alone, in a tuple, or
    straight from one of the ``producers`` calls: ``return scaler.fit_transform(rows)``), the
    first split of what a caller stores it in: ``X = normalise(X)`` (the scaler fitted inside),
    then ``X[:n]`` / ``X[n:]`` in the caller; None otherwise."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returned = [r.value for r in ctx.own_nodes(scope, ast.Return) if r.value is not None]
    if not any(_returns_made(v, made, producers) for v in returned):
        return None
    for call in ctx.call_sites(scope):
        stmt = ctx.statement_of(call)
        if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        names = {n.id for n in (target.elts if isinstance(target, ast.Tuple) else [target]) if isinstance(n, ast.Name)}
        outer = ctx.scope_of(stmt)
        stored = follow_derived(ctx, Data(ctx, names, {stmt}), outer, end_position(stmt))
        split = split_of(ctx, outer, stored, end_position(stmt), END)
        if split is not None:
            return split
    return None


def _returns_made(value: ast.expr, made: Data, producers: FrozenSet[ast.AST]) -> bool:
    if made(value) or any(made(e) for e in getattr(value, "elts", ())):
        return True
    return bool(producers) and any(node in producers for node in walk(value))


# -- splits --------------------------------------------------------------------------------

# One row slice: (the sliced data, its lower bound's text, its upper bound's text, the node).
RowSlice = Tuple[ast.expr, Optional[str], Optional[str], ast.Subscript]


def split_of(
    ctx: LintContext,
    scope: ast.AST,
    is_data: Data,
    after: Tuple[int, int],
    before: Tuple[int, int],
    depth: int = 0,
) -> Optional[ast.expr]:
    """The first split of the data in ``scope`` between the two positions: a splitter call given
    the data (or a dataset built from it: ``random_split(TensorDataset(x, y), ...)``), or
    complementary row slices (``X[:n]`` with ``X[n:]``, ``x[:n, :]`` with ``x[n:, :]``,
    ``df.iloc[:n]`` with ``df.iloc[n:]``). ``X[:5]`` next to ``X[-5:]`` is no split."""
    calls, slices = _scope_splits(ctx, scope)
    for call in calls:
        if after < (call.lineno, call.col_offset) < before and any(given(ctx, arg, is_data) for arg in call.args):
            return call
    inside = [s for s in slices if after < (s[3].lineno, s[3].col_offset) < before and is_data(s[0])]
    lowers = {lower: piece for _, lower, _, piece in inside if lower is not None}
    for _, lower, upper, piece in inside:
        if lower is None and upper in lowers and upper not in _ONE_ROW:
            return _later(piece, lowers[upper])
    found = _index_split(ctx, scope, is_data, after, before)
    return found if found is not None or depth >= 2 else _split_in_helper(ctx, scope, is_data, after, before, depth)


def _split_in_helper(
    ctx: LintContext, scope: ast.AST, is_data: Data, after: Tuple[int, int], before: Tuple[int, int], depth: int
) -> Optional[ast.expr]:
    """A call, in ``scope``, of a function of this file that splits the data it is given:
    ``X_tr, X_te = holdout(X_scaled)`` with ``def holdout(rows): ... return rows[:n], rows[n:]``
    (reported at the call; up to two calls deep)."""
    for call in ctx.own_nodes(scope, ast.Call):
        callee = ctx.local_function_called(call)
        if callee is None or callee is scope or not after < (call.lineno, call.col_offset) < before:
            continue
        params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
        if isinstance(call.func, ast.Attribute) and params[:1] == ["self"]:
            params = params[1:]  # ``self.holdout(X)``
        for param, arg in zip(params, call.args):
            if is_data(arg) and split_of(ctx, callee, Data(ctx, {param}, {callee}), (0, 0), END, depth + 1):
                return call
    return None


# Cuts that hold out one row (``X[:-1]`` with ``X[-1:]``: inputs and the last step's target of a
# series), not a test set.
_ONE_ROW = frozenset({"1", "-1"})


def _later(one: ast.expr, other: ast.expr) -> ast.expr:
    return one if (one.lineno, one.col_offset) > (other.lineno, other.col_offset) else other


def _index_split(
    ctx: LintContext, scope: ast.AST, is_data: Data, after: Tuple[int, int], before: Tuple[int, int]
) -> Optional[ast.expr]:
    """The data indexed by two sides of one split of an index array: ``X[train_idx]`` with
    ``X[test_idx]`` where ``train_idx, test_idx = perm[:n], perm[n:]`` (or the outputs of
    ``train_test_split(np.arange(len(X)))``), or ``X[perm[:n]]`` with ``X[perm[n:]]``."""
    seen: Dict[Tuple[str, str, Optional[str]], Tuple[object, ast.expr]] = {}
    for node in walk(scope):
        if not (isinstance(node, ast.Subscript) and after < (node.lineno, node.col_offset) < before):
            continue
        origin = index_origin(ctx, node)
        if origin is None or ctx.scope_of(node) is not scope or not is_data(node.value):
            continue
        key, side = (ctx.text(node.value), origin[0], origin[2]), origin[1]
        if key in seen and seen[key][0] != side:
            return _later(node, seen[key][1])
        seen.setdefault(key, (side, node))
    return None


def index_origin(ctx: LintContext, node: ast.Subscript) -> Optional[Tuple[str, object, Optional[str]]]:
    """``(which split, which side, where it is cut)`` of the index array ``node`` takes rows
    with: a name holding a part of a split (``X[train_idx]``), or a row slice written inline
    (``X[perm[:n]]``). A slice's cut is its upper bound for the head, its lower bound for the
    rest: ``perm[:n]`` and ``perm[n:]`` are the two sides of one split, ``perm[i : i + b]`` a
    batch."""
    index = node.slice
    if isinstance(index, ast.Name):
        origin = split_origin(ctx, index)
        if origin is None:
            return None
        piece = row_slice(origin[2]) if isinstance(origin[2], ast.Subscript) else None
        return origin[0], origin[1], _cut(piece) if piece is not None else None
    piece = row_slice(index) if isinstance(index, ast.Subscript) else None
    return (ctx.text(piece[0]), piece[1] is None, _cut(piece)) if piece is not None else None


def _cut(piece: RowSlice) -> Optional[str]:
    return piece[2] if piece[1] is None else piece[1]


def given(ctx: LintContext, arg: ast.expr, is_data: Data) -> bool:
    return is_data(arg) or (isinstance(arg, ast.Call) and any(is_data(a) for a in arg.args))


def _scope_splits(ctx: LintContext, scope: ast.AST) -> Tuple[List[ast.Call], List[RowSlice]]:
    """The splitter calls and row slices of ``scope`` (its own code), gathered once per scope."""
    cache: Dict[ast.AST, Tuple[List[ast.Call], List[RowSlice]]] = ctx.shared("td011.splits", dict)
    found = cache.get(scope)
    if found is None:
        calls: List[ast.Call] = []
        slices: List[RowSlice] = []
        for node in walk(scope):
            if isinstance(node, ast.Call) and ctx.qualname(node.func) in SPLITTERS and ctx.scope_of(node) is scope:
                calls.append(node)
            elif isinstance(node, ast.Subscript) and ctx.scope_of(node) is scope:
                piece = row_slice(node)
                if piece is not None:
                    slices.append(piece)
        found = cache[scope] = (calls, slices)
    return found


def row_slice(node: ast.Subscript) -> Optional[RowSlice]:
    """``X[:n]``, ``X[n:]``, ``X[a:b]``, ``x[:n, :]``, ``df.iloc[n:]`` as a row slice. Alone a
    slice splits nothing: ``split_of`` pairs a head (``X[:n]``) with a piece starting at its end
    (``X[n:]``, or ``X[n:m]`` of a train/validation/test split)."""
    rows = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    if not isinstance(rows, ast.Slice) or rows.step is not None or (rows.lower is None and rows.upper is None):
        return None
    data = node.value
    if isinstance(data, ast.Attribute) and data.attr in ("iloc", "loc"):
        data = data.value
    if not isinstance(data, (ast.Name, ast.Attribute)):
        return None
    text = lambda e: ast.unparse(e) if e is not None else None  # noqa: E731 - bound spelling
    return data, text(rows.lower), text(rows.upper), node


def end_position(node: ast.AST) -> Tuple[int, int]:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


END = (1 << 30, 0)


def split_origin(ctx: LintContext, name: ast.Name) -> Optional[Tuple[str, object, ast.expr]]:
    """``(which split, which side, where)`` when ``name`` holds a part of a split: an output of a
    splitter call (its position in the unpacked tuple) or a row slice (head or rest)."""
    bound = ctx.binding(name)
    for _ in range(MAX_STEPS):
        if bound is None:
            return None
        source = bound.source
        if bound.kind == "unpack" and isinstance(source, ast.Call) and ctx.qualname(source.func) in SPLITTERS:
            return f"{source.lineno}:{source.col_offset}", bound.index, source
        found = [row_slice(n) for n in walk(bound.value) if isinstance(n, ast.Subscript)] if bound.value else []
        pieces = [p for p in found if p is not None]
        if bound.kind == "assign" and len(pieces) == 1:
            data, lower, _, node = pieces[0]
            return ctx.text(data), lower is None, node
        bound = carried_from(ctx, name, bound)
    return None


def part_of_split(ctx: LintContext, part: ast.Name, whole: Data) -> bool:
    """Whether ``part`` was made by splitting ``whole`` (``X_tr, X_te, ... = train_test_split(X, ...)``,
    ``x_tr = torch.tensor(x[:n, :])``), possibly converted since."""
    bound = ctx.binding(part)
    for _ in range(MAX_STEPS):
        if bound is None or not isinstance(bound.stmt, ast.stmt):
            return False
        for node in walk(bound.stmt):
            if isinstance(node, ast.Call) and ctx.qualname(node.func) in SPLITTERS:
                if any(given(ctx, arg, whole) for arg in node.args):
                    return True
            elif isinstance(node, ast.Subscript):
                piece = row_slice(node)
                if piece is not None and whole(piece[0]):
                    return True
                if whole(node.value) and index_origin(ctx, node) is not None:
                    return True  # ``X[train_idx]``
        bound = carried_from(ctx, part, bound)
    return False
