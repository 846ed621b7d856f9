"""TD013: gradients lost to ``torch.no_grad()`` / ``torch.inference_mode()``.

Code in a no-grad block records no autograd graph. Two shapes lose gradients:

- the loss is computed inside the block and backpropagated there: nothing computed in the
  block gets a gradient (an error);
- the trained model's forward pass runs inside the block and the loss built from its output
  is backpropagated outside: the optimizer steps that model's parameters, which never get a
  gradient (an error when the optimizer is built from that model's parameters).

A ``backward()`` (and ``step()``) inside the block for a loss computed *before* it is
harmless: ``backward`` works whatever the grad mode, so gradients are identical. It is only
mentioned (information), as a sign the block holds more than evaluation.
"""

from __future__ import annotations

import ast
import bisect
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple, Union

from .. import torchapi
from ..context import LintContext, walk
from ..model import ERROR, INFORMATION, WARNING
from ..registry import Reporter, rule
from .no_grad_sources import Source, calls_in_no_grad_withs, no_grad_with, runs_model, sources, step_owners
from .no_grad_trained import trained_models

# A no-grad region: a ``with torch.no_grad():`` block, or the decorator of a no-grad function.
Block = Union[ast.stmt, ast.expr]
WithBlock = Union[ast.With, ast.AsyncWith]

_FOLLOW = 4  # assignments followed back from a loss to the model call it came from


@rule(
    "TD013",
    "backward-in-no-grad",
    "backward() of a loss computed under torch.no_grad() / inference_mode()",
    ERROR,
    """
Inside `with torch.no_grad():` (or `torch.inference_mode()`, or a function decorated with
either) PyTorch records no graph. A loss computed there cannot be backpropagated: either
`backward()` fails with "element 0 of tensors does not require grad", or, when only part of
the computation happened outside the block, only that part gets gradients and the rest of the
model silently stops learning. The same happens when the trained model's forward pass runs
under `no_grad` and the loss is backpropagated after the block. Keep the forward pass, the
loss and `backward()` out of no-grad blocks; keep only evaluation (and frozen feature
extractors whose parameters no optimizer steps) inside them.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call in torchapi.backward_calls(ctx):
        if torchapi.grad_mode_at(ctx, call) == torchapi.NO_GRAD:
            _backward_inside(ctx, report, call)
        else:
            _forward_inside(ctx, report, call)


def _backward_inside(ctx: LintContext, report: Reporter, call: ast.Call) -> None:
    block = _no_grad_block(ctx, call)
    where = f" (line {block.lineno})" if block is not None else ""
    made = _where_loss_was_made(ctx, call, block)
    if made == "before":
        report.report(
            call,
            f"`{ctx.text(call)}` runs with gradients disabled{where}, but its loss was computed before the block, "
            f"so the gradients are the same as outside it; moving the training step out of the no-grad block only "
            f"makes the intent clear.",
            severity=INFORMATION,
        )
        return
    report.report(
        call,
        f"`{ctx.text(call)}` runs with gradients disabled{where}: the computation in that block records no "
        f"graph, so nothing computed there gets gradients. Move the training step out of the no-grad block.",
        severity=ERROR if made == "inside" else WARNING,
    )


def _where_loss_was_made(ctx: LintContext, call: ast.Call, block: Optional[Block]) -> str:
    """``inside`` the no-grad block (or inline in the call), ``before`` it, or ``unknown``."""
    subject = _subject(call)
    if subject is None:
        return "unknown"
    if not isinstance(subject, ast.Name):
        return "inside"  # ``crit(model(x), y).backward()``: computed right there
    bound = ctx.binding(subject)
    if bound is None or bound.kind not in ("assign", "aug", "unpack"):
        return "unknown"
    holder = block if isinstance(block, (ast.With, ast.AsyncWith)) else ctx.enclosing_function(call)
    if holder is None:
        return "unknown"
    if any(anc is holder for anc in ctx.ancestors(bound.stmt)):
        return "inside"
    if isinstance(holder, (ast.With, ast.AsyncWith)) and (bound.stmt.lineno, bound.stmt.col_offset) < (
        holder.lineno,
        holder.col_offset,
    ):
        return "before"
    return "unknown"


def _subject(call: ast.Call) -> Optional[ast.expr]:
    """The loss a backward call differentiates (``scaler.scale(loss)`` unwrapped)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "backward" and not call.args:
        return torchapi.unscaled(func.value)
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return None


def _forward_inside(ctx: LintContext, report: Reporter, call: ast.Call) -> None:
    """The loss backpropagated here came from a model call made under ``no_grad``, and an
    optimizer of this scope steps that model's parameters: they never get a gradient."""
    subject = _subject(call)
    if subject is None:
        return
    stepped = _stepped_owners(ctx, call)
    if not stepped or not _may_match(ctx, call, stepped):
        return
    if not _may_reach(ctx, subject):
        return
    found = list(_no_grad_model_calls(ctx, subject))
    # A model also run with grad into the same loss does get gradients through it: the no-grad
    # call is a target or a pseudo-label (Double DQN, FixMatch, stop-gradient, self-training).
    # Compared by exact text: ``model.backbone`` under no_grad and ``model.head`` with grad is
    # still the bug, and so is a with-grad call in the other branch of an ``if`` (only one runs).
    with_grad = [(c, model) for c, block, model in found if block is None]
    guessed = call in ctx.shared("no_grad_backward.guessed", set)
    if with_grad and guessed:
        return  # the optimizer is not shown: it may well step only the part run with grad (a head)
    for model_call, block, model in found:
        if block is None or any(m == model and not _exclusive(ctx, model_call, c) for c, m in with_grad):
            continue
        spellings = [model, *_assigned_from(ctx, model_call)]
        whole = guessed  # a guessed model must run whole under no_grad (not ``net.backbone``: frozen parts)
        owner = next((o for o in stepped for m in spellings if _covers(o, m, whole)), None)
        if owner is None:
            continue
        report.report(
            model_call,
            f"`{_short(ctx.text(model_call))}` runs under `{_header(ctx, block)}` (line {block.lineno}), but its "
            f"output feeds `{ctx.text(call)}` (line {call.lineno}) and {_trains(ctx, call, owner)} "
            f"get no gradient from it. Run the forward pass outside the no-grad block.",
            severity=ERROR,
        )
        return


def _covers(owner: str, model: str, whole: bool) -> bool:
    """The stepped ``owner`` gets no gradient through the no-grad call of ``model``: it is that
    model, a part of it (``Adam(model.conv1.parameters())`` and ``model(x)`` under no_grad: the
    whole model ran without gradients), or, unless ``whole`` is asked, holds it."""
    return owner == model or owner.startswith(model + ".") or not whole and model.startswith(owner + ".")


def _trains(ctx: LintContext, backward: ast.Call, owner: str) -> str:
    if backward in ctx.shared("no_grad_backward.guessed", set):
        return f"`{owner}` is the model trained here (`{owner}.train()`, by an optimizer the file does not show): its parameters"
    return f"the optimizer steps `{owner}`'s parameters: they"


def _exclusive(ctx: LintContext, one: ast.AST, other: ast.AST) -> bool:
    """``one`` and ``other`` lie in different branches of one ``if`` / conditional expression
    (``if transformer: out = model(x)`` / ``else: out, h = model(x, h)``): never both run."""
    path = [one, *ctx.ancestors(one)]
    other_path = [other, *ctx.ancestors(other)]
    common = {id(node) for node in other_path}
    for i, anc in enumerate(path):
        if id(anc) in common:
            if i == 0 or not isinstance(anc, (ast.If, ast.IfExp)):
                return False
            j = next(k for k, node in enumerate(other_path) if node is anc)
            mine, theirs = _branch(anc, path[i - 1]), _branch(anc, other_path[j - 1]) if j else None
            return mine is not None and theirs is not None and mine != theirs
    return False


def _branch(node: Union[ast.If, ast.IfExp], child: ast.AST) -> Optional[str]:
    if isinstance(node, ast.IfExp):
        return "body" if child is node.body else "orelse" if child is node.orelse else None
    if any(stmt is child for stmt in node.body):
        return "body"
    return "orelse" if any(stmt is child for stmt in node.orelse) else None


def _stepped_owners(ctx: LintContext, backward: ast.Call) -> List[str]:
    """Modules whose parameters are stepped with the gradients of ``backward``: the optimizers
    whose ``step()`` follows it in its scope before the scope's next ``backward()`` (a GAN's
    ``d_loss.backward(); opt_d.step()`` steps D only, though ``opt_g`` steps G further on)."""
    steps = _step_calls_by_scope(ctx).get(ctx.scope_of(backward), [])
    until = ctx.shared("next_backward", lambda: _next_backward(ctx)).get(backward)
    owners: List[str] = []
    unknown = False  # a step whose optimizer's parameters the file does not show
    positions = ctx.shared("step_positions", dict)
    if steps and id(steps) not in positions:
        positions[id(steps)] = [_pos(c) for c in steps]
    first = bisect.bisect_right(positions[id(steps)], _pos(backward)) if steps else 0
    for index in range(first, len(steps)):  # in source order: those after the backward, up to the next one
        call = steps[index]  # (no ``steps[first:]``: a copy of the rest of a long script's steps per backward)
        if until is not None and _pos(call) > _pos(until):
            break
        stepped = step_owners(ctx, call)
        unknown = unknown or not stepped
        owners.extend(o for o in stepped if o not in owners)
    if owners or not unknown:
        return owners
    guessed: Set[ast.AST] = ctx.shared("no_grad_backward.guessed", set)
    guessed.add(backward)  # an optimizer we cannot see into
    return trained_models(ctx, backward)


def _pos(node: ast.AST) -> Tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _next_backward(ctx: LintContext) -> Dict[ast.AST, ast.Call]:
    """Each backward call -> the next one in source order in the same scope, found once."""
    found: Dict[ast.AST, ast.Call] = {}
    last: Dict[ast.AST, ast.Call] = {}
    for call in torchapi.backward_calls(ctx):  # in source order
        scope = ctx.scope_of(call)
        if scope in last:
            found[last[scope]] = call
        last[scope] = call
    return found


def _step_calls_by_scope(ctx: LintContext) -> Dict[ast.AST, List[ast.Call]]:
    """The ``x.step()`` calls of each scope that run when the scope runs (not in nested
    functions), as ``own_calls(scope)`` would list them, found once for the file."""

    def build() -> Dict[ast.AST, List[ast.Call]]:
        found: Dict[ast.AST, List[ast.Call]] = {}
        for call in torchapi.step_calls(ctx):
            owner = ctx.owner_of(call)
            if owner is ctx.tree or isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                found.setdefault(owner, []).append(call)
        for calls in found.values():
            calls.sort(key=_pos)  # ``_stepped_owners`` bisects them
        return found

    return ctx.shared("step_calls_by_scope", build)


def _may_match(ctx: LintContext, backward: ast.Call, stepped: List[str]) -> bool:
    """Whether some model called under a no-grad ``with`` in this file is one the optimizers of
    ``backward``'s scope step (or part of one): when none is, the loss's sources need no search
    (most files, and every file without a no-grad block). Answered once per scope."""
    prefixes = ctx.shared("no_grad_model_prefixes", lambda: _no_grad_model_prefixes(ctx))
    if not prefixes:
        return False
    return any(owner in prefixes or _inside_any(owner, prefixes) for owner in stepped)


def _inside_any(owner: str, prefixes: Set[str]) -> bool:
    """``model.conv1`` when ``model`` runs under no_grad (a part of a model called whole)."""
    parts = owner.split(".")
    return any(".".join(parts[:i]) in prefixes for i in range(1, len(parts)))


def _no_grad_model_prefixes(ctx: LintContext) -> Set[str]:
    """The text of the model of every call under a no-grad ``with`` and its dotted prefixes
    (``self.model.encoder`` -> ``self``, ``self.model``, ``self.model.encoder``): an owner
    matches a model call when it is one of them, as ``_forward_inside`` requires. A model that
    is a parameter of a helper is also spelled as each caller's argument (``predict(net, x)``)."""
    found: Set[str] = set()
    for _, model in _no_grad_model_calls_of_file(ctx):
        parts = model.split(".")
        found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return found


def _no_grad_model_calls_of_file(ctx: LintContext) -> List[Tuple[ast.Call, str]]:
    """Every call under a no-grad ``with`` that runs a model (what ``sources`` can find), with
    the model's text, and the same text as the helper's callers spell it, found once."""

    def build() -> List[Tuple[ast.Call, str]]:
        found: List[Tuple[ast.Call, str]] = []
        for call in calls_in_no_grad_withs(ctx):
            if isinstance(call, ast.Call) and no_grad_with(ctx, call) is not None:
                model = runs_model(ctx, call)
                if model is not None:
                    found.append((call, model))
                    found.extend((call, spelled) for spelled in _as_callers_spell(ctx, call, model))
                    found.extend((call, spelled) for spelled in _assigned_from(ctx, call))
        return found

    return ctx.shared("no_grad_model_calls", build)


def _assigned_from(ctx: LintContext, call: ast.Call) -> List[str]:
    """The model of ``call`` as it was assigned: ``self.model(data)`` after ``self.model =
    diffusion_model`` is also ``diffusion_model``, the name the optimizer's parameters were
    taken from (``Adam(diffusion_model.parameters())`` in a trainer's ``__init__``)."""
    if not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)):
        return []
    bound = ctx.self_attr_binding(call.func)  # one step only: the parameter's own name
    value = bound.value if bound is not None else None
    return [ctx.text(value)] if isinstance(value, (ast.Name, ast.Attribute)) else []


def _as_callers_spell(ctx: LintContext, call: ast.Call, model: str) -> List[str]:
    """``model`` as the callers of the function around ``call`` spell it, when it is one of
    that function's parameters (``def predict(model, x)`` called as ``predict(net, x)``)."""
    func = ctx.enclosing_function(call)
    head = model.split(".")[0]
    if func is None or head not in {a.arg for a in func.args.args}:
        return []
    rest = model[len(head) :]  # every argument of every call: a superset, for a quick gate only
    return [
        ctx.text(arg) + rest for site in ctx.call_sites(func) for arg in [*site.args, *(k.value for k in site.keywords)]
    ]


def _no_grad_model_calls(ctx: LintContext, subject: ast.expr) -> Iterator[Source]:
    """Model calls under a no-grad ``with`` that ``subject``'s value is built from, following
    its values back a few steps (each value's answer is kept: the long scripts that rebind
    ``loss`` from the same few names in every block stay linear)."""
    memo: Dict[ast.AST, List[Source]] = ctx.shared("no_grad_sources", dict)
    yield from sources(ctx, subject, memo, _FOLLOW)


def _may_reach(ctx: LintContext, subject: ast.expr) -> bool:
    """Whether ``_sources`` can find anything from ``subject``: it holds a no-grad model call,
    or a name some value built from one flows into (``_tainted_names``). When not, the search
    through the loss's assignments is skipped (a long script backpropagates a loss in every
    block and runs a model under ``no_grad`` in every block, never feeding one to the other)."""
    calls = ctx.shared("no_grad_model_call_set", lambda: {c for c, _ in _no_grad_model_calls_of_file(ctx)})
    tainted = ctx.shared("no_grad_tainted_names", lambda: _tainted_names(ctx))
    return any(sub in calls or _key(sub) in tainted for sub in walk(subject))


def _key(node: ast.AST) -> Optional[str]:
    """How a read is matched by spelling: a name as itself, an attribute as ``.attr``."""
    if node.__class__ is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if node.__class__ is ast.Attribute:
        return "." + node.attr  # type: ignore[attr-defined]
    return None


def _tainted_names(ctx: LintContext) -> Set[str]:
    """Names bound, anywhere in the file, to a value that holds a no-grad model call or reads a
    name in this set (a closure by spelling, so it errs towards more names). ``_sources`` only
    follows a name to the ``assign``/``unpack`` bindings of that name, and a binding's value lies
    in the header of its statement (or in a walrus, which is there too): a search that finds a
    model call passes through names of this set only, starting from the subject."""
    tainted: Set[str] = set()
    pending: List[str] = []

    def taint(node: ast.AST) -> None:
        stmt = ctx.statement_of(node)
        names = list(_names_bound_in_header(stmt))
        func = ctx.enclosing_function(stmt) if isinstance(stmt, ast.Return) else None
        if func is not None:  # a helper's result: its calls carry the value (``predict(x)``)
            names += [func.name, "." + func.name]
        for name in names:
            if name not in tainted:
                tainted.add(name)
                pending.append(name)

    for call, _ in _no_grad_model_calls_of_file(ctx):
        taint(call)
    # every name and attribute read, by ``_key``: from the index, or read here where the index
    # saw no grad mode in the text (one came through ``from utils import *``)
    loads = (ctx.loads if ctx.loads is not None else _loads_by_key(ctx)) if pending else {}
    while pending:
        for load in loads.get(pending.pop(), ()):
            taint(load)
    return tainted


def _loads_by_key(ctx: LintContext) -> Dict[str, List[ast.expr]]:
    """``ctx.loads`` read from every node of the file (in the index's order, no walk)."""
    loads: Dict[str, List[ast.expr]] = {}
    name_kind, attribute_kind, load_kind = ast.Name, ast.Attribute, ast.Load
    node: Any
    for node in ctx.parents:
        kind = node.__class__
        if (kind is not name_kind and kind is not attribute_kind) or node.ctx.__class__ is not load_kind:
            continue
        loads.setdefault(node.id if kind is name_kind else "." + node.attr, []).append(node)
    return loads


_BODY_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _names_bound_in_header(stmt: ast.AST) -> Iterator[str]:
    """The names a statement stores to outside its nested statements (targets, walruses,
    comprehension variables)."""
    for field in stmt._fields:
        value = getattr(stmt, field, None)
        if field in _BODY_FIELDS or value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                for node in walk(item):
                    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store):
                        yield _key(node)  # type: ignore[misc]  # a Name or an Attribute has a key


def _no_grad_block(ctx: LintContext, node: ast.AST) -> Optional[Block]:
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            if any(torchapi.grad_mode_of(ctx, item.context_expr) == torchapi.NO_GRAD for item in anc.items):
                return anc
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in anc.decorator_list:
                if torchapi.grad_mode_of(ctx, deco) == torchapi.NO_GRAD:
                    return deco
            return None
    return None


def _header(ctx: LintContext, block: Block) -> str:
    span = ctx.source.first_line_span(block)
    return ctx.source.line(span.start_line)[span.start_col : span.end_col].strip()


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
