"""TD007: a loss tensor summed (or collected) across iterations without ``.item()``.

``total += loss`` keeps a reference to ``loss`` and, through it, to the autograd graph of
every batch: activations that should be freed each step stay alive, memory grows with the
epoch, and the run slows down or dies with an out-of-memory error many batches later.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple, Union

from .. import torchapi
from ..bindings import Binding, Function
from ..context import LintContext, Loop, walk
from ..fixes import replace_node
from ..model import WARNING, Fix
from ..registry import Reporter, rule
from ..training import analysis
from .loss_handoffs import holds_handed_value
from .loss_meters import fed_meter
from .loss_scopes import backpropagated_ref, backwards_of, derived_names, live_parts, releases, used_as_tensor_in

# What an accumulator can be: a name or ``self.attr``.
Ref = Union[ast.Name, ast.Attribute]

_COLLECTS = frozenset({"append", "update"})  # ``list.append(loss)``; ``meter.update(loss, n)`` (loss_meters.py)


@rule(
    "TD007",
    "loss-accumulated-with-graph",
    "A loss tensor is accumulated across iterations without .item() / .detach()",
    WARNING,
    """
`total_loss += loss` stores the loss **tensor**, and with it the autograd graph of that batch
(all its saved activations). Across an epoch nothing is freed: memory grows until the run slows
down or fails with out-of-memory far from the cause. Accumulate a number, `loss.item()`, or a
graph-free tensor, `loss.detach()`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for loop, node in _candidates(ctx):
        found = _accumulation(ctx, node)
        if found is None:
            continue
        acc, loss = found
        if not _defined_outside(ctx, acc, loop) or _backpropagated(ctx, acc, loop):
            continue
        if _returned_as_loss(ctx, acc, loop):
            continue
        if _within_one_step(ctx, loop):
            continue
        if _under_no_grad(ctx, node):
            continue
        report.report(
            loss,
            f"`{ctx.text(acc)}` accumulates the loss tensor `{ctx.text(loss)}` across iterations: it keeps "
            f"every batch's autograd graph alive. Accumulate `{_release_text(ctx, loss, 'item')}` instead.",
            fix=_fix(ctx, acc, loss, loop),
        )


def _candidates(ctx: LintContext) -> List[Tuple[Loop, ast.stmt]]:
    """``(loop, statement)`` for each statement of the file that ``_may_accumulate``, with the
    innermost loop whose body holds it (where it is judged), in the order of the loops and then
    of the statements. Read from the index once: asking each loop for its own statements read a
    statement again for every loop around it, and searched the module's list for each loop."""
    found: List[Tuple[Loop, ast.stmt]] = []
    for kind in (ast.AugAssign, ast.Assign, ast.Expr):
        for node in ctx.all_nodes(kind):
            if _may_accumulate(node):
                loops = ctx.enclosing_loops(node)
                if loops:
                    found.append((loops[0], node))
    rank = {loop: index for index, loop in enumerate(ctx.loops)}
    found.sort(key=lambda pair: (rank[pair[0]], pair[1].lineno, pair[1].col_offset))
    return found


def _may_accumulate(node: ast.AST) -> bool:
    """The shapes ``_accumulation`` can accept (``+=``, ``acc = ... + ...``, ``.append(x)``),
    told from the node alone: most statements of a loop are none of them, and need no look at
    the loops around them."""
    if isinstance(node, ast.AugAssign):
        return isinstance(node.op, ast.Add)
    if isinstance(node, ast.Assign):
        return isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add)
    value = getattr(node, "value", None)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _COLLECTS


def _is_ref(expr: ast.AST) -> bool:
    """A name or ``self.attr``: what an accumulator can be."""
    return _as_ref(expr) is not None


def _as_ref(expr: ast.AST) -> Optional[Ref]:
    """``expr`` when it is a name or ``self.attr``, else None."""
    if isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
        return expr
    return None


def _same(ctx: LintContext, a: ast.AST, b: ast.AST) -> bool:
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    return isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute) and ctx.text(a) == ctx.text(b)


def _accumulation(ctx: LintContext, node: ast.AST) -> Optional[Tuple[Ref, ast.expr]]:
    """``(accumulator, loss expression)`` for ``acc += loss``, ``acc = acc + loss`` and
    ``acc_list.append(loss)`` (also on ``self.attr``), where the added value holds a live loss
    tensor."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        target = _as_ref(node.target)
        if target is None:
            return None
        loss = _live_loss(ctx, node.value)
        return (target, loss) if loss is not None else None
    acc = _as_ref(node.targets[0]) if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
    if (
        acc is not None
        and isinstance(node, ast.Assign)
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.op, ast.Add)
    ):
        left, right = node.value.left, node.value.right
        if _is_ref(left) and _same(ctx, left, acc):
            loss = _live_loss(ctx, right)
            return (acc, loss) if loss is not None else None
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "append"
        and len(node.value.args) == 1
    ):
        holder = _as_ref(node.value.func.value)
        if holder is None:
            return None
        loss = _live_loss(ctx, node.value.args[0])
        return (holder, loss) if loss is not None else None
    meter = fed_meter(ctx, node)  # ``losses.update(loss, n)`` into a meter that sums it
    holder = _as_ref(meter.func.value) if meter is not None and isinstance(meter.func, ast.Attribute) else None
    loss = _live_loss(ctx, meter.args[0]) if meter is not None and holder is not None else None
    return (holder, loss) if holder is not None and loss is not None else None


def _live_loss(ctx: LintContext, expr: ast.expr, depth: int = 0) -> Optional[ast.expr]:
    """The part of ``expr`` that is a loss tensor still attached to its graph, if any."""
    if isinstance(expr, ast.BinOp):
        return _live_loss(ctx, expr.left, depth) or _live_loss(ctx, expr.right, depth)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _live_loss(ctx, expr.operand, depth)
    if isinstance(expr, ast.Call):
        return expr if not releases(expr) and torchapi.is_loss_value(ctx, expr) else None
    if _is_ref(expr) and _loss_ref(ctx, expr, depth) and not _computed_without_grad(ctx, expr):
        return expr
    return None


def _loss_ref(ctx: LintContext, ref: ast.expr, depth: int) -> bool:
    """A name or ``self.attr`` that holds a loss: assigned one, or backpropagated."""
    value = ctx.value_of(ref)
    if isinstance(value, ast.Call) and torchapi.is_loss_value(ctx, value):
        return True
    # ``content = weight * mse(a, b)``: a weighted loss is still a loss
    if isinstance(value, ast.BinOp) and depth < 2 and _live_loss(ctx, value, depth + 1) is not None:
        return True
    if _holds_a_number(ctx, ref):
        return False  # ``loss = loss.item()`` after the backward: the name, not the value
    if _is_backpropagated_ref(ctx, ref):
        return True
    return isinstance(ref, ast.Name) and depth < 2 and _augmented_loss(ctx, ref, depth)


def _holds_a_number(ctx: LintContext, ref: ast.expr) -> bool:
    """Every assignment that may reach the name ``ref`` stores ``x.item()``, ``float(x)``,
    ``x.detach()`` and the like: no graph, whatever else the name holds elsewhere."""
    if not isinstance(ref, ast.Name):
        return False
    bindings = ctx.alternatives(ref)
    return bool(bindings) and all(
        b.kind == "assign" and isinstance(b.value, ast.Call) and releases(b.value) for b in bindings
    )


def _computed_without_grad(ctx: LintContext, ref: ast.expr, depth: int = 0) -> bool:
    """``ref`` holds a value made under ``no_grad`` / ``inference_mode``: ``with torch.no_grad():
    outputs = model(**batch)``, then, after the block, ``loss = outputs.loss`` (accelerate's
    examples). Such a tensor has no graph to keep alive, even where the same name is
    backpropagated in the training loop above. Followed through plain assignments of names,
    attributes and subscripts; every assignment that may reach ``ref`` must be under no_grad."""
    root = _root_name(ref)
    bindings = ctx.alternatives(root) if root is not None else []
    return bool(bindings) and all(_bound_without_grad(ctx, b, depth) for b in bindings)


def _bound_without_grad(ctx: LintContext, bound: Binding, depth: int) -> bool:
    if torchapi.grad_mode_at(ctx, bound.stmt) == torchapi.NO_GRAD:
        return True
    # ``loss = outputs.loss`` outside the block: judged by where ``outputs`` was made
    if bound.kind != "assign" or bound.value is None or depth >= 3:
        return False
    return _root_name(bound.value) is not None and _computed_without_grad(ctx, bound.value, depth + 1)


def _root_name(expr: ast.expr) -> Optional[ast.Name]:
    """``outputs`` in ``outputs``, ``outputs.loss``, ``outputs["loss"]``; None for anything else
    (a call or an operation may mix in tensors with a graph)."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr if isinstance(expr, ast.Name) else None


def _augmented_loss(ctx: LintContext, name: ast.Name, depth: int) -> bool:
    """``name`` last changed in place into a loss: ``style = 0.`` then ``style += mse(a, b)`` in a
    loop, then ``style *= weight`` (fast_neural_style). Walks back from the read through the
    augmented assignments of its scope: one adding a loss makes it one; ``*=`` / ``/=`` keep
    what it was; a plain assignment is judged by its value."""
    at = (name.lineno, name.col_offset)
    for bound in ctx.bindings.latest(ctx.scope_of(name), name.id, at, 6):
        stmt = bound.stmt
        if bound.kind != "aug" or not isinstance(stmt, ast.AugAssign):
            value = bound.value
            return isinstance(value, ast.Call) and torchapi.is_loss_value(ctx, value)
        if isinstance(stmt.op, (ast.Add, ast.Sub)) and _live_loss(ctx, stmt.value, depth + 1) is not None:
            return True
        if not isinstance(stmt.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            return False
    return False


def _is_backpropagated_ref(ctx: LintContext, ref: ast.expr) -> bool:
    """A name (or ``self.attr``) that has ``.backward()`` called on it in the same function is a
    loss; so is a name copied into one (``loss = raw_loss``, regularisers added, ``loss.backward()``)."""
    if isinstance(ref, ast.Name) and holds_handed_value(ctx, ref):
        return True  # ``optimizer_step(loss / accum, opt)``, a helper that backpropagates it
    return backpropagated_ref(ctx, ref, ctx.scope_of(ref))


def _defined_outside(ctx: LintContext, acc: Ref, loop: Loop) -> bool:
    """The accumulator was bound before the loop and is not reset on every iteration inside it.

    A reset under an ``if`` inside the loop (``if i % log_interval == 0: total = 0``) still
    lets the graphs of many batches pile up between two resets."""
    start, end = (loop.lineno, loop.col_offset), (loop.end_lineno or loop.lineno, loop.end_col_offset or 0)
    if isinstance(acc, ast.Attribute):
        resets = [
            n
            for n in ctx.own_nodes(loop, ast.Assign)
            if any(_is_ref(t) and _same(ctx, t, acc) for t in n.targets) and not _is_self_add(ctx, n, acc)
        ]
        return not any(_every_iteration(ctx, n, loop) for n in resets)
    scope = ctx.scope_of(loop)
    before = ctx.bindings.in_range(scope, acc.id, None, start)
    inside = [
        b
        for b in ctx.bindings.in_range(scope, acc.id, start, end)
        if b.kind == "assign" and not _is_self_add(ctx, b.stmt, acc) and _every_iteration(ctx, b.stmt, loop)
    ]
    return bool(before) and not inside


def _every_iteration(ctx: LintContext, stmt: ast.AST, loop: Loop) -> bool:
    """``stmt`` runs on every pass of ``loop`` (no ``if`` / ``try`` / nested loop between)."""
    for anc in ctx.ancestors(stmt):
        if anc is loop:
            return True
        if isinstance(anc, (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.IfExp)):
            return False
    return True


def _is_self_add(ctx: LintContext, stmt: ast.AST, acc: Ref) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(value, ast.BinOp) and _is_ref(value.left) and _same(ctx, value.left, acc)


def _backpropagated(ctx: LintContext, acc: Ref, loop: ast.AST, augmented: bool = False) -> bool:
    """The accumulated tensor is itself differentiated: ``loss_sum.backward()``, or the backward
    of a value built from it (``total = content + style_sum``; ``torch.stack(losses).sum()``).
    Summing loss terms for one step is how losses are built, not a leak.

    The answer depends on the scope and the accumulator's spelling only: kept per file, so a long
    script accumulating ``total`` in every block reads the scope's assignments and backward
    calls once, not once per block (that was quadratic)."""
    scope = ctx.scope_of(loop)
    key = (scope, isinstance(acc, ast.Attribute), acc.id if isinstance(acc, ast.Name) else ctx.text(acc), augmented)
    cache: Dict[Tuple[ast.AST, bool, str, bool], bool] = ctx.shared("td007_backpropagated", dict)
    found = cache.get(key)
    if found is None:
        found = cache[key] = _backpropagated_in(ctx, acc, scope, augmented)
    return found


def _backpropagated_in(ctx: LintContext, acc: Ref, scope: ast.AST, augmented: bool) -> bool:
    derived = _derived_names(ctx, acc, scope, augmented)
    read = backwards_of(ctx, scope)  # every name and attribute the scope's backward calls read
    if not derived.isdisjoint(read.names):
        return True
    return isinstance(acc, ast.Attribute) and ctx.text(acc) in read.attrs


def _returned_as_loss(ctx: LintContext, acc: Ref, loop: Loop) -> bool:
    """The accumulator flows into what its function returns (``lcls += bce(p, t)`` per output
    head, then ``loss = lbox + lobj + lcls; return loss``, PyTorch-YOLOv3's ``compute_loss``):
    one call's loss being built, which its caller, often in another file, backpropagates.
    ``.item()`` there would stop those terms from training. Not so for a loop over batches
    (see ``_spans_batches``): what it returns is an epoch's total, the leak. Nor when this file calls the function and no caller may backpropagate the result
    (it only logs it): a metric."""
    func = ctx.enclosing_function(loop)
    if func is None or not _flows_into_return(ctx, acc, func) or _spans_batches(ctx, acc, loop):
        return False
    sites = ctx.call_sites(func)
    return not sites or any(_may_backpropagate(ctx, site) for site in sites)


def _spans_batches(ctx: LintContext, acc: Ref, loop: Loop) -> bool:
    """A loop the accumulator outlives (``loop``, or one around it when the accumulator is made
    before that one) is a loop over batches: it runs backward, steps an optimizer, or runs the
    network forward (an evaluation function returning ``total / len(loader)``)."""
    outer = [o for o in ctx.enclosing_loops(loop) if _defined_outside(ctx, acc, o)]
    for each in [loop, *outer]:
        if analysis(ctx).backwards(each):
            return True
        if any(
            torchapi.stepped_optimizer(ctx, c) is not None or _runs_network(ctx, c, each) for c in ctx.own_calls(each)
        ):
            return True
    return False


def _runs_network(ctx: LintContext, call: ast.Call, loop: Loop) -> bool:
    """``call`` runs a network that ``loop`` does not rebind: the same model on each iteration's
    data. ``disc(fake)`` in ``for disc in discriminators`` (one batch through each of several
    networks, a loss being built) does not count."""
    root = _root_name(call.func)
    if root is None or not torchapi.is_model(ctx, call.func):
        return False
    bound = ctx.binding(root)
    start, end = (loop.lineno, loop.col_offset), (loop.end_lineno, loop.end_col_offset)
    return bound is None or not start <= bound.pos <= end


def _flows_into_return(ctx: LintContext, acc: Ref, func: Function) -> bool:
    """A ``return`` of ``func`` mentions the accumulator, or a name built from it, as a tensor
    (``return total * 0.5``; not ``return total.item() / n``, a number)."""
    derived = _derived_names(ctx, acc, func, augmented=True, live=True)
    attr = ctx.text(acc) if isinstance(acc, ast.Attribute) else None
    returns = ctx.own_nodes(func, ast.Return)
    return any(r.value is not None and _mentions(ctx, r.value, derived, attr, live=True) for r in returns)


def _may_backpropagate(ctx: LintContext, site: ast.Call) -> bool:
    """What this call returns may be differentiated: handed on by ``return``, differentiated
    in place (``helper(x).backward()``), or assigned to names that are (``loss += helper(x)``;
    ``loss, parts = helper(x)`` then ``loss.backward()``)."""
    stmt = ctx.statement_of(site)
    if isinstance(stmt, ast.Return):
        return True
    if any(ctx.is_inside(site, call) for call in torchapi.backward_calls(ctx)):
        return True
    if isinstance(stmt, ast.Assign):
        targets = [e for t in stmt.targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    else:
        return False
    refs = [r for r in map(_as_ref, targets) if r is not None]
    if any(_backpropagated(ctx, ref, site, augmented=True) for ref in refs):
        return True
    # ``style = self.style_loss(a, b)`` then ``return content + 10 * style``: handed on through
    # a name, as a direct ``return`` hands it on (pytorch-book's AdaIN ``forward``).
    caller = ctx.enclosing_function(site)
    return caller is not None and any(_flows_into_return(ctx, ref, caller) for ref in refs)


def _derived_names(ctx: LintContext, acc: Ref, scope: ast.AST, augmented: bool = False, live: bool = False) -> Set[str]:
    """``acc`` (when a name) and the names assigned, in ``scope``, from expressions mentioning
    it or a name derived from it (a few assignments deep); with ``augmented``, also the targets
    of ``total += acc``; with ``live``, not through ``.item()`` and the like."""
    start: Set[str] = {acc.id} if isinstance(acc, ast.Name) else set()
    attr = ctx.text(acc) if isinstance(acc, ast.Attribute) else None
    kinds = (ast.Assign, ast.AnnAssign, ast.AugAssign) if augmented else (ast.Assign, ast.AnnAssign)
    return derived_names(ctx, start, attr, scope, kinds, live)


def _mentions(ctx: LintContext, expr: ast.AST, names: Set[str], attr: Optional[str], live: bool = False) -> bool:
    """``expr`` reads one of ``names`` (or ``attr``); with ``live``, outside a call that makes
    a number or a graph-free tensor of it (``float(total)``, ``total.item()``)."""
    for sub in live_parts(expr) if live else walk(expr):
        if isinstance(sub, ast.Name) and sub.id in names:
            return True
        if attr is not None and isinstance(sub, ast.Attribute) and ctx.text(sub) == attr:
            return True
    return False


def _within_one_step(ctx: LintContext, loop: Loop) -> bool:
    """A micro-batch loop of gradient accumulation: it steps no optimizer, and one is stepped
    right after it (in the same function or enclosing loop). What it collects lives until
    that step only, a bounded handful of graphs, not the whole run's."""
    calls = ctx.own_calls(loop)
    if any(torchapi.stepped_optimizer(ctx, c) is not None for c in calls):
        return False
    outer = ctx.enclosing_loops(loop)
    last = _last_step(ctx, outer[0] if outer else ctx.scope_of(loop))
    return last is not None and last > (loop.end_lineno, loop.end_col_offset)


def _last_step(ctx: LintContext, holder: ast.AST) -> Optional[Tuple[int, int]]:
    """Where the last optimizer step of ``holder`` starts; found once per loop or scope (the
    module's calls, in a script, were scanned once per loop in it: quadratic)."""
    cache: Dict[ast.AST, Optional[Tuple[int, int]]] = ctx.shared("td007_last_step", dict)
    if holder not in cache:
        steps = [c for c in ctx.own_calls(holder) if torchapi.stepped_optimizer(ctx, c) is not None]
        cache[holder] = max(((c.lineno, c.col_offset) for c in steps), default=None)
    return cache[holder]


def _under_no_grad(ctx: LintContext, node: ast.AST) -> bool:
    return torchapi.grad_mode_at(ctx, node) == torchapi.NO_GRAD


def _release_text(ctx: LintContext, loss: ast.expr, method: str) -> str:
    text = ctx.text(loss)
    if not isinstance(loss, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"({text})"
    return f"{text}.{method}()"


def _fix(ctx: LintContext, acc: Ref, loss: ast.expr, loop: Loop) -> Optional[Fix]:
    """``.item()`` unless the accumulator is used as a tensor later (``total.item()``)."""
    method = "detach" if _used_as_tensor(ctx, acc, loop) else "item"
    return replace_node(
        ctx.source, loss, _release_text(ctx, loss, method), f"Accumulate `{_release_text(ctx, loss, method)}`"
    )


def _used_as_tensor(ctx: LintContext, acc: Ref, loop: Loop) -> bool:
    """The accumulator is later used as a tensor: ``total.item()``, ``torch.stack(losses)``.
    A text search over the enclosing function is enough to choose between two safe fixes."""
    return used_as_tensor_in(ctx, ctx.scope_of(loop), ctx.text(acc))
