"""TD020: an evaluation metric summed over one rank's shard and reported as if it were the whole.

A ``DataLoader`` with a ``DistributedSampler`` gives each rank ``1/world_size`` of the data. An
evaluation loop over it that accumulates a metric (``correct += ...``, ``meter.update(...)``) and
prints, logs or compares the result without ``dist.all_reduce`` / ``all_gather`` measures this
rank's shard only: under ``if rank == 0`` the number printed for "the" validation set is rank 0's
part of it, and ranks choosing a best checkpoint from their own shard disagree.

Followed: the loader (found by ``lint/sharded.py``: by name, ``self.x``, or returned by a function
of this file or of another file of the project) into ``for ... in loader`` loops, also through
calls to functions of this file that take it as an argument (3 levels); the accumulator after the
loop into a ``print``/log call, a comparison, or a ``return`` whose value the call site prints or
compares; assignments derived from it (``acc = correct / total``), two rounds.

Quiet when the metric or a name derived from it reaches anything named like a collective or a
sync (``all_reduce``, ``all_gather``, ``reduce``, ``gather``, ``synchronize_between_processes``,
``broadcast``...), a function of this file that calls one, or code the rule cannot read; when the
loop itself calls one (values reduced per batch); when the file uses torchmetrics; when the loop
runs ``backward`` (training, not evaluation), stops early (``break``: a sampled estimate) or
nothing marks it as evaluation (``no_grad``/``inference_mode`` or ``.eval()``); when the line
printed names the rank (``f"[GPU{rank}] accuracy"``: a per-rank figure on purpose). Warning when
the report sits under a rank-0 test (``if rank == 0``, ``if is_main_process``); information
otherwise.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from .. import torchapi
from ..bindings import FUNCTIONS
from ..context import LintContext, terminal_name, walk
from ..model import INFORMATION, WARNING
from ..registry import Reporter, rule
from ..sharded import name_index, sharded_loaders

_SYNC = re.compile(r"reduce|gather|sync|broadcast", re.IGNORECASE)
_RANK_LABEL = re.compile(r"rank|gpu", re.IGNORECASE)
_RANK_TEST = re.compile(r"rank|master|main_process|is_main|is_primary|local_zero", re.IGNORECASE)
_REPORTERS = frozenset({"print", "info", "log", "add_scalar", "add_scalars", "write", "warning", "debug", "log_dict"})
_ACCUMULATE = frozenset({"update", "append", "extend", "add"})
_DEPTH = 3


@rule(
    "TD020",
    "metric-from-one-shard",
    "Evaluation metric computed on this rank's DistributedSampler shard only",
    WARNING,
    """
A `DataLoader` with a `DistributedSampler` gives each rank `1/world_size` of the data. A metric
accumulated over it (`correct += ...`) and printed or compared without `dist.all_reduce` is this
rank's shard only: under `if rank == 0` the "validation accuracy" is rank 0's part of the set,
and each rank picks its best checkpoint from its own part. `all_reduce` the sums (correct and
total, or loss sum and count) before dividing, or evaluate the full set on one rank with a loader
that has no `DistributedSampler`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    found = sharded_loaders(ctx)
    if not found or _synchronised(ctx):
        return
    seen: Set[Tuple[int, int]] = set()
    for loader in found:
        for use in loader.holders:
            for loop in _loops_from(ctx, use, [], 0):
                for where, guarded, name, loop_node in _one_shard_reports(ctx, loop):
                    key = (where.lineno, where.col_offset)
                    if key in seen:
                        continue
                    seen.add(key)
                    report.report(
                        where,
                        _message(name, loop_node, loader.where(ctx), guarded),
                        severity=WARNING if guarded else INFORMATION,
                    )


def _synchronised(ctx: LintContext) -> bool:
    """torchmetrics metrics synchronise across ranks in ``compute()``: the file is out of scope."""
    return any(
        (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torchmetrics" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torchmetrics")
        for node in ctx.import_nodes  # every import, from the index (a walk read the whole file)
    )


def _loops_from(ctx: LintContext, use: ast.expr, chain: List[ast.Call], depth: int) -> Iterator[Tuple]:
    """(loop, chain of calls that brought the loader there) for each loop over ``use``."""
    parent = ctx.parents.get(use)
    while isinstance(parent, ast.Call) and terminal_name(parent.func) in ("enumerate", "tqdm", "iter", "track"):
        use, parent = parent, ctx.parents.get(parent)
    if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is use:
        yield parent, chain
        return
    if not isinstance(parent, ast.Call) or use not in parent.args or depth >= _DEPTH:
        return
    func = ctx.local_function_called(parent)
    if func is None:
        return
    param = _param_at(ctx, func, parent, parent.args.index(use))
    if param is None:
        return
    for node in walk(func):
        if isinstance(node, ast.Name) and node.id == param and isinstance(node.ctx, ast.Load):
            bound = ctx.binding(node)
            if bound is not None and bound.kind == "param" and bound.stmt is func:
                yield from _loops_from(ctx, node, chain + [parent], depth + 1)


def _param_at(ctx: LintContext, func: ast.AST, call: ast.Call, index: int) -> Optional[str]:
    if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]) or not isinstance(func, FUNCTIONS):
        return None
    names = [p.arg for p in list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)]
    if ctx.enclosing_class(func) is not None and names and names[0] in ("self", "cls"):
        names = names[1:]
    return names[index] if index < len(names) else None


def _one_shard_reports(ctx: LintContext, found: Tuple) -> Iterator[Tuple[Any, bool, str, Any]]:
    """(where the shard's metric is reported, under a rank-0 test?, its name, the loop)."""
    loop, chain = found
    if not _evaluation(ctx, loop):
        return
    if _truncated(loop):
        return  # ``break`` after a few batches: an estimate from a sample, on purpose
    if _reduces_per_batch(ctx, loop):
        return  # ``acc1 = reduce_tensor(acc1)`` before ``meter.update(acc1)``: what is summed is global
    for name, home in _accumulators(ctx, loop):
        metrics = _derived(ctx, home, {name}, loop)
        if _handed_on(ctx, metrics):
            continue
        for where, guarded, returned in _reported(ctx, home, metrics, loop.end_lineno or loop.lineno):
            if not returned:
                yield where, guarded, name, loop
                continue
            site = next((c for c in chain if ctx.local_function_called(c) is home), None)
            if site is None:
                continue  # returned to callers the loader did not come from: not followed
            around = ctx.parents.get(site)
            if isinstance(around, ast.Call) and terminal_name(around.func) in _REPORTERS:
                if not _RANK_LABEL.search(ctx.text(around)):  # ``print(evaluate(model, loader))``
                    yield around, _rank_zero(ctx, around), name, loop
                continue
            outer = ctx.scope_of(site)
            after = _derived(ctx, outer, _result_names(ctx, site), site)
            if _handed_on(ctx, after):
                continue
            for where2, guarded2, _ in _reported(ctx, outer, after, site.end_lineno or site.lineno):
                yield where2, guarded2, name, loop


def _reduces_per_batch(ctx: LintContext, loop: ast.AST) -> bool:
    """A collective (or a function of this file that calls one) inside the loop."""
    calls = [n for n in walk(loop) if isinstance(n, ast.Call)]
    return any(_SYNC.search(terminal_name(c.func)) or _syncs_inside(ctx, c) for c in calls)


def _truncated(loop: ast.AST) -> bool:
    """The loop stops early (``if i >= n: break``): not a pass over the whole shard."""
    stack = list(getattr(loop, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


_PLAIN = frozenset(
    {"print", "float", "int", "round", "str", "len", "item", "format", "tensor", "cpu", "tolist", "max", "min", "abs"}
    | {"sum", "mean", "dict", "list", "tuple", "append", "isfinite", "isnan", "exp", "sqrt", "log"}
)


def _handed_on(ctx: LintContext, names: Set[str]) -> bool:
    """The metric goes into a collective (``dist.all_reduce(correct)``, ``meter.all_reduce()``,
    ``logger.synchronize_between_processes()``) or into a call we cannot see into, which may
    reduce it: then the rule stays quiet."""
    found_in = name_index(ctx)
    with_args = {id(c) for n in names for c in found_in.args.get(n, [])}
    calls = {id(c): c for n in names for c in found_in.args.get(n, []) + found_in.receivers.get(n, [])}
    for call in calls.values():
        func = call.func
        in_args = id(call) in with_args
        name = terminal_name(func)
        if _SYNC.search(name):
            return True
        if in_args and name not in _PLAIN and name not in _REPORTERS and name not in _ACCUMULATE:
            if _opaque(ctx, call) or _syncs_inside(ctx, call):
                return True
    return False


def _opaque(ctx: LintContext, call: ast.Call) -> bool:
    """A call whose body this file does not hold (neither a function nor a class of it)."""
    return ctx.local_function_called(call) is None and _local_class(ctx, call) is None


def _local_class(ctx: LintContext, call: ast.Call) -> Optional[ast.ClassDef]:
    found = ctx.callee_class(call)
    return ctx.classes.get(found[len("local:") :]) if found and found.startswith("local:") else None


def _syncs_inside(ctx: LintContext, call: ast.Call) -> bool:
    """The function or class ``call`` runs calls a collective somewhere in its body."""
    body: Optional[ast.AST] = ctx.local_function_called(call) or _local_class(ctx, call)
    return body is not None and any(isinstance(n, ast.Call) and _SYNC.search(terminal_name(n.func)) for n in walk(body))


def _evaluation(ctx: LintContext, loop: ast.AST) -> bool:
    # Also in functions defined in the loop (``def train_step(): ... loss.backward()`` handed to a
    # timer): their ``no_grad`` blocks are looked at below, so their backward counts too.
    nodes = walk(loop)
    if any(
        isinstance(c, ast.Call) and (torchapi.is_backward(ctx, c) or terminal_name(c.func) == "step") for c in nodes
    ):
        return False
    if torchapi.grad_mode_at(ctx, loop) == torchapi.NO_GRAD:
        return True
    inner = [n for n in nodes if isinstance(n, (ast.With, ast.AsyncWith))]
    if any(torchapi.grad_mode_of(ctx, item.context_expr) == torchapi.NO_GRAD for w in inner for item in w.items):
        return True
    func = ctx.enclosing_function(loop)
    return any(terminal_name(c.func) == "eval" and not c.args for c in ctx.own_calls(func if func else ctx.tree))


def _accumulators(ctx: LintContext, loop: Any) -> List[Tuple[str, ast.AST]]:
    """(name, the scope binding it) for names set before the loop that the loop adds to
    (``x += ...``, ``x.update(...)``); the scope may enclose the loop's function (a closure)."""
    found: List[Tuple[str, ast.AST]] = []
    for node in walk(loop):
        name = None
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ACCUMULATE:
            if isinstance(node.func.value, ast.Name):
                name = node.func.value.id
        if name is None or any(name == n for n, _ in found):
            continue
        for depth, scope in enumerate(ctx.scope_chain(node)):
            bound = ctx.bindings.all_bindings(scope, name)
            if bound:
                # In the loop's own scope, set before the loop; in an enclosing one (a closure
                # that runs later), set anywhere there.
                start = (loop.lineno, loop.col_offset) if depth == 0 else (10**9, 0)
                if any(b.kind == "assign" and b.pos < start for b in bound):
                    found.append((name, scope))
                break
    return found


def _derived(ctx: LintContext, home: ast.AST, names: Set[str], after: Any) -> Set[str]:
    """``names`` and names assigned from them after ``after`` in ``home`` (two rounds)."""
    found = set(names)
    end = after.end_lineno or after.lineno
    for _ in range(2):
        for stmt in ctx.own_nodes(home, ast.Assign):
            if stmt.lineno > end and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                if _mentions(stmt.value, found):
                    found.add(stmt.targets[0].id)
    return found


def _result_names(ctx: LintContext, site: ast.Call) -> Set[str]:
    stmt = ctx.statement_of(site)
    if isinstance(stmt, ast.Assign) and stmt.value is site and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            return {target.id}
    return set()


def _mentions(expr: ast.AST, names: Set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(expr))


def _live(ctx: LintContext, expr: ast.AST, names: Set[str], end: int) -> bool:
    """``expr`` reads one of ``names`` as the loop left it (not a name assigned afresh since:
    ``correct = 0`` before a second pass)."""
    for node in walk(expr):
        if isinstance(node, ast.Name) and node.id in names:
            bound = ctx.binding(node)
            fresh = (
                bound is not None
                and bound.kind == "assign"
                and getattr(bound.stmt, "lineno", 0) > end
                and (bound.value is None or not _mentions(bound.value, names))
                and not _first_assignment(ctx, node, bound)  # a closure's accumulator may be set after the loop's def
            )
            if not fresh:
                return True
    return False


def _first_assignment(ctx: LintContext, node: ast.Name, bound: Any) -> bool:
    for scope in ctx.scope_chain(node):
        assigns = [b for b in ctx.bindings.all_bindings(scope, node.id) if b.kind == "assign"]
        if assigns:
            return assigns[0] is bound
    return False


def _reported(ctx: LintContext, home: ast.AST, names: Set[str], end: int) -> Iterator[Tuple[ast.AST, bool, bool]]:
    """(node, under a rank-0 test?, is a return) for each report of ``names`` after line ``end``."""
    if not names:
        return
    for node in ctx.own_nodes(home, ast.Call, ast.Return):
        if node.lineno <= end:
            continue
        if isinstance(node, ast.Return):
            if node.value is not None and _live(ctx, node.value, names, end):
                yield node, False, True
            continue
        if terminal_name(node.func) in _REPORTERS and any(_live(ctx, a, names, end) for a in _arguments(node)):
            if _RANK_LABEL.search(ctx.text(node)):
                continue  # a per-rank figure, labelled so
            yield node, _rank_zero(ctx, node), False
    for node in walk(home):
        if isinstance(node, ast.Compare) and node.lineno > end and _compares_metrics(node, names):
            if not _live(ctx, node, names, end):
                continue
            if ctx.enclosing_function(node) is (home if isinstance(home, FUNCTIONS) else None):
                yield node, _rank_zero(ctx, node), False


def _compares_metrics(node: ast.Compare, names: Set[str]) -> bool:
    """``acc > best_acc``: an ordering between the metric and another value (not a constant)."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Gt, ast.Lt, ast.GtE, ast.LtE)):
        return False
    sides = [node.left, node.comparators[0]]
    return any(_mentions(s, names) for s in sides) and not any(isinstance(s, ast.Constant) for s in sides)


def _arguments(call: ast.Call) -> List[ast.expr]:
    return list(call.args) + [k.value for k in call.keywords]


def _rank_zero(ctx: LintContext, node: ast.AST) -> bool:
    tests: Dict[str, bool] = ctx.conditions(node)
    return any(_RANK_TEST.search(test) and side for test, side in tests.items())


def _message(name: str, loop: Any, sampler_at: str, guarded: bool) -> str:
    who = "rank 0's shard" if guarded else "this rank's shard"
    return (
        f"`{name}` is summed over a loader with a `DistributedSampler` ({sampler_at}) in the loop at line "
        f"{loop.lineno} and reported here without `dist.all_reduce`: the figure covers {who} only "
        "(1/world_size of the data); all_reduce the sums before dividing."
    )
