"""TD010: a training loop switches the model to eval mode and never back.

The classic shape: ``for epoch: train_one_epoch(...); evaluate(model, val_loader)`` where
``evaluate`` calls ``model.eval()`` and nothing calls ``model.train()``. Epoch 1 trains
correctly; every later epoch trains with dropout off and batch-norm statistics frozen.
"""

from __future__ import annotations

import ast
import bisect
from typing import Dict, List, Optional, Set, Tuple, Union

from .. import torchapi
from ..bindings import Function
from ..context import LintContext, Loop, receiver
from ..model import WARNING, Fix, Span, TextEdit
from ..modes import mode_matters, switch_of
from ..registry import Reporter, rule
from ..training import analysis, parameters_taken
from .frozen_models import deliberately_frozen

_FOLLOW_DEPTH = 3
Pos = Tuple[int, int]


@rule(
    "TD010",
    "eval-never-back-to-train",
    "model.eval() inside the training loop is never undone by model.train()",
    WARNING,
    """
`model.eval()` is sticky: the model stays in eval mode until `model.train()` is called. When a
training loop evaluates (directly or through an `evaluate()` helper) and nothing switches back,
only the first epoch trains normally; every later one runs with dropout disabled and batch-norm
running statistics frozen, so regularisation silently disappears and the model overfits or
trains differently from what you think. Call `model.train()` at the top of each epoch (or at
the top of your `train_one_epoch()` helper).
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    qualifying = []
    for loop in ctx.loops:
        found = _eval_without_train(ctx, loop)
        if found is not None:
            qualifying.append((loop, found))
        else:
            _report_eval_before(ctx, loop, report)
    around_others = {id(outer) for loop, _ in qualifying for outer in ctx.enclosing_loops(loop)}
    for loop, (site, model) in qualifying:
        if id(loop) in around_others:
            continue  # an inner loop has the same problem and is reported instead
        if model is not None and not mode_matters(ctx, model):
            continue
        if deliberately_frozen(ctx, model if model is not None else _switched_in_helper(ctx, site)):
            continue
        label = ctx.text(model) if model is not None else "the model"
        report.report(
            site,
            f"`{ctx.text(site)}` puts {('`' + label + '`') if model is not None else label} in eval mode, and nothing in "
            f"this training loop calls `.train()` again: later iterations train with dropout off and "
            f"batch-norm statistics frozen.",
            fix=_fix(ctx, loop, model),
        )


def _eval_without_train(ctx: LintContext, loop: Loop) -> Optional[Tuple[ast.Call, Optional[ast.expr]]]:
    """``(eval site, model)`` when ``loop`` trains, switches to eval, and never back."""
    training = analysis(ctx)
    calls = training.own_calls(loop)
    if not _trains(ctx, loop):
        return None
    if _any_switch(ctx, calls, "train", 0):
        return None
    interesting = _switches_or_helpers(ctx)
    for call in calls:
        if call not in interesting:
            continue
        if switch_of(call) == "eval":
            model = receiver(call)
            if (
                torchapi.is_model(ctx, model)
                and _is_trained(ctx, model)
                and not _fresh_each_iteration(ctx, model, loop)
            ):
                return call, model
            continue
        found = _helper(ctx, call)
        if found is not None and _any_switch(found[0], analysis(found[0]).own_calls(found[1]), "eval", 1):
            if _switches_own_copy(found[0], found[1]):
                continue  # it builds a model of its own (from a checkpoint) and evaluates that
            passed = _argument_for_switched_param(found[0], call, found[1])
            if passed is not None and (_fresh_each_iteration(ctx, passed, loop) or _untrained(ctx, passed, calls)):
                continue  # a new model each pass, or one nothing here tunes (an EMA copy)
            return call, passed
    return None


def _switches_or_helpers(ctx: LintContext) -> Set[ast.Call]:
    """The calls of the file that may switch a mode or run a helper, named ``eval``/``train``, like
    a function of the file or like an import: ``switch_of`` and ``_helper`` say None of every
    other call, which the loops (a long script's 51k calls) then skip without a look."""

    def collect() -> Set[ast.Call]:
        names = ["eval", "train"] + [func.name for func in ctx.functions] + list(ctx.imports.aliases)
        return set(ctx.calls_named_any(names))

    return ctx.shared("train_mode.switches_or_helpers", collect)


def _helper(ctx: LintContext, call: ast.Call) -> Optional[Tuple[LintContext, Function]]:
    """The function ``call`` runs, with the context of its file: one of this file, or one of the
    project imported by name (``from training import train_epoch``: a main script whose epoch loop
    calls ``train_epoch(...)`` and ``val_epoch(...)`` from two files). Found once per call."""
    cache: Dict[ast.Call, Optional[Tuple[LintContext, Function]]] = ctx.shared("train_mode.helpers", dict)
    if call in cache:
        return cache[call]
    local = ctx.local_function_called(call)
    found: Optional[Tuple[LintContext, Function]] = (ctx, local) if local is not None else None
    if found is None and isinstance(call.func, ast.Name) and call.func.id in ctx.imports.aliases:
        qualname = ctx.qualname(call.func)
        if qualname and not qualname.startswith("torch."):
            hit = ctx.project.find_function(qualname, ctx.path)
            found = hit if hit is not None and hit[0] is not ctx else None
    cache[call] = found
    return found


def _fresh_each_iteration(ctx: LintContext, model: ast.expr, loop: Loop) -> bool:
    """The model is built anew inside the loop (``for trial: model = Net(); train(model);
    evaluate(model)``): the eval mode of the last one does not reach the next."""
    built = _built_by_call(ctx, model)
    return built is not None and loop in ctx.enclosing_loops(built)


def _built_by_call(ctx: LintContext, model: Optional[ast.expr]) -> Optional[ast.AST]:
    """The statement that assigns the name ``model`` a call's result (``model = Net()``), or None."""
    if not isinstance(model, ast.Name):
        return None
    bound = ctx.binding(model)
    if bound is None or bound.kind != "assign" or not isinstance(bound.value, ast.Call):
        return None
    return bound.stmt


def _report_eval_before(ctx: LintContext, loop: Loop, report: Reporter) -> None:
    """``model.eval()`` before a training loop that never calls ``.train()``: every step of the
    run trains in eval mode. Only for an outermost loop of its function, and only when the
    switched object is the trained model and its mode matters."""
    if ctx.enclosing_loops(loop) or not _trains(ctx, loop):
        return
    training = analysis(ctx)
    if _any_switch(ctx, training.own_calls(loop), "train", 0):
        return
    scope: Union[Function, ast.Module] = ctx.enclosing_function(loop) or ctx.tree
    positions, pending = _eval_sites(ctx, scope)
    index = bisect.bisect_left(positions, (loop.lineno, loop.col_offset))  # the calls before the loop
    last = pending[index - 1] if index else None
    if last is None or not mode_matters(ctx, receiver(last)):
        return
    label = ctx.text(receiver(last))
    if _trained_in_a_later_phase(ctx, scope, loop, label) or deliberately_frozen(ctx, receiver(last)):
        return
    report.report(
        last,
        f"`{ctx.text(last)}` puts `{label}` in eval mode before the training loop at line {loop.lineno}, and "
        f"nothing calls `{label}.train()`: the whole run trains with dropout off and batch-norm statistics frozen.",
    )


def _eval_sites(ctx: LintContext, scope: Union[Function, ast.Module]) -> Tuple[List[Pos], List[Optional[ast.Call]]]:
    """The positions of ``scope``'s own calls (in source order) and, for each, the eval switch
    still in force once that call has run: the last ``model.eval()`` of a trained model with no
    ``.train()`` after it, or None. One pass per scope, so each loop finds what precedes it by
    bisection (scanning the calls before every loop was quadratic in a long script)."""
    cache: Dict[ast.AST, Tuple[List[Pos], List[Optional[ast.Call]]]] = ctx.shared("train_mode.eval_sites", dict)
    found = cache.get(scope)
    if found is None:
        positions: List[Pos] = []
        pending: List[Optional[ast.Call]] = []
        last: Optional[ast.Call] = None
        for call in analysis(ctx).own_calls(scope):  # sorted by position
            mode = switch_of(call)
            if mode == "train":
                last = None
            elif mode == "eval" and torchapi.is_model(ctx, receiver(call)) and _is_trained(ctx, receiver(call)):
                last = call
            positions.append((call.lineno, call.col_offset))
            pending.append(last)
        found = cache[scope] = (positions, pending)
    return found


def _trained_in_a_later_phase(ctx: LintContext, scope: Union[Function, ast.Module], loop: Loop, label: str) -> bool:
    """``unet.eval()``, a loop that tunes something else, ``unet.train()``, a loop that tunes
    ``unet`` (imagic): the modes follow the phases on purpose. A ``.train()`` after the loop
    counts only when another training loop of the function comes after it."""
    end = (loop.end_lineno or loop.lineno, loop.end_col_offset or 0)
    switches = _train_switches(ctx, scope).get(label, [])
    first = bisect.bisect_right(switches, end)  # the first ``label.train()`` after the loop
    if first == len(switches):
        return False
    loops = _outer_training_loops(ctx, scope)
    return bool(loops) and loops[-1] > switches[first]


def _train_switches(ctx: LintContext, scope: Union[Function, ast.Module]) -> Dict[str, List[Pos]]:
    """``scope``'s own ``x.train()`` calls: their positions in source order, by the text of ``x``
    (found once per scope: a script that evaluates before each of its loops asked it per loop)."""
    cache: Dict[ast.AST, Dict[str, List[Pos]]] = ctx.shared("train_mode.train_switches", dict)
    found = cache.get(scope)
    if found is None:
        found = cache[scope] = {}
        for call in analysis(ctx).own_calls(scope):
            if switch_of(call) == "train":
                found.setdefault(ctx.text(receiver(call)), []).append((call.lineno, call.col_offset))
    return found


def _outer_training_loops(ctx: LintContext, scope: Union[Function, ast.Module]) -> List[Pos]:
    """The positions, in source order, of the loops of ``scope`` that are not inside another
    loop and train (step an optimizer and backpropagate), found once per scope."""
    cache: Dict[ast.AST, List[Pos]] = ctx.shared("train_mode.outer_training_loops", dict)
    found = cache.get(scope)
    if found is None:
        found = cache[scope] = sorted(
            (later.lineno, later.col_offset)
            for later in ctx.loops
            if not ctx.enclosing_loops(later)
            and (ctx.enclosing_function(later) or ctx.tree) is scope
            and _trains(ctx, later)
        )
    return found


def _trains(ctx: LintContext, loop: Loop) -> bool:
    """The loop computes gradients and steps an optimizer, itself or through local helpers.
    Answered once per loop (both checks of the rule ask it of every loop)."""
    cache: Dict[ast.AST, bool] = ctx.shared("train_mode.trains", dict)
    found = cache.get(loop)
    if found is None:
        found = cache[loop] = _steps_and_backpropagates(ctx, loop)
    return found


def _steps_and_backpropagates(ctx: LintContext, loop: Loop) -> bool:
    training = analysis(ctx)
    calls = training.own_calls(loop)
    steps = training.steps(loop)
    backs = bool(training.backwards(loop))
    if steps and backs:
        return True  # the helpers could only add to it (each loop of a long script does both itself)
    interesting = _switches_or_helpers(ctx)
    for call in calls:
        found = _helper(ctx, call) if call in interesting else None
        if found is not None:
            home, helper = found
            helper_training = analysis(home)  # the helper may be another file's
            h_steps = helper_training.steps(helper)
            h_backs = bool(helper_training.backwards(helper))
            steps, backs = steps or h_steps, backs or h_backs
    return steps and backs


def _any_switch(ctx: LintContext, calls: List[ast.Call], mode: str, depth: int) -> bool:
    interesting = _switches_or_helpers(ctx)
    for call in calls:
        if call not in interesting:
            continue
        if switch_of(call) == mode:
            return True
        if depth < _FOLLOW_DEPTH:
            found = _helper(ctx, call)
            if found is not None and _any_switch(found[0], analysis(found[0]).own_calls(found[1]), mode, depth + 1):
                return True
    return False


def _is_trained(ctx: LintContext, model: ast.expr) -> bool:
    """When the file builds optimizers from ``x.parameters()``, only those ``x`` count: a
    frozen teacher or EMA copy put in eval mode is fine. When every optimizer of the file is
    built over a list of tensors (``Adam([latent] + noises)``: a GAN inversion tunes the
    latent through a frozen generator), no model is trained."""
    optimized = _optimized_models(ctx)
    if optimized:
        return ctx.text(model) in optimized
    return not _only_tensors_optimized(ctx)


def _untrained(ctx: LintContext, model: ast.expr, calls: List[ast.Call]) -> bool:
    """``model`` (handed to an evaluation helper) is neither an optimizer's model here nor handed
    by the loop to a helper that backpropagates (``fit_epoch(..., net, ...)`` trains ``net``;
    the ``ema`` copy evaluated beside it is never trained)."""
    if _is_trained(ctx, model):
        return False
    text = ctx.text(model)
    for call in calls:
        found = _helper(ctx, call) if any(ctx.text(a) == text for a in _arguments(call)) else None
        if found is not None and analysis(found[0]).backpropagates(found[1]):
            return False
    return True


def _arguments(call: ast.Call) -> List[ast.expr]:
    return list(call.args) + [k.value for k in call.keywords]


def _only_tensors_optimized(ctx: LintContext) -> bool:
    def collect() -> bool:
        constructions = _optimizer_constructions(ctx)
        return bool(constructions) and all(_over_tensor_list(ctx, c) for c in constructions)

    return ctx.shared("train_mode.only_tensors_optimized", collect)


def _over_tensor_list(ctx: LintContext, construction: ast.Call) -> bool:
    """``Adam([latent_in] + noises, lr=...)``: the parameters are a list written here, of names
    that are not models and hold no ``.parameters()``."""
    params = construction.args[0] if construction.args else None
    params = params or next((k.value for k in construction.keywords if k.arg == "params"), None)
    if params is None:
        return False
    parts: List[ast.expr] = []
    pending = [params]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pending += [node.left, node.right]
        elif isinstance(node, (ast.List, ast.Tuple)):
            parts.append(node)
            pending += node.elts
        elif isinstance(node, ast.Name):
            value = ctx.value_of(node)
            if value is None or torchapi.is_model(ctx, node) or parameters_taken(ctx, value):
                return False
            if not isinstance(value, (ast.Call, ast.List, ast.ListComp)):
                return False
        else:
            return False
    return bool(parts)  # at least one list literal: not one opaque ``params`` name


def _optimizer_constructions(ctx: LintContext) -> List[ast.Call]:
    """The calls building a ``torch.optim`` optimizer (not a scheduler), in file order."""
    classes = [c for c in ctx.callee_classes() if c and c.startswith("torch.optim.")]
    return ctx.calls_of_class(c for c in classes if not c.startswith("torch.optim.lr_scheduler"))


def _optimized_models(ctx: LintContext) -> Set[str]:
    def collect() -> Set[str]:
        names: Set[str] = set()
        for call in _optimizer_constructions(ctx):
            names |= parameters_taken(ctx, call)
        return names

    return ctx.shared("optimized_models", collect)


def _switched_in_helper(ctx: LintContext, site: ast.Call) -> Optional[ast.expr]:
    """What the helper called at ``site`` puts in eval mode (``model`` of its ``model.eval()``),
    when it switches one object only."""
    helper = ctx.local_function_called(site)
    if helper is None:
        return None
    switched = {ctx.text(receiver(c)): receiver(c) for c in analysis(ctx).own_calls(helper) if switch_of(c) == "eval"}
    return next(iter(switched.values())) if len(switched) == 1 else None


def _switches_own_copy(ctx: LintContext, helper: Function) -> bool:
    """Every ``.eval()`` the helper itself calls is on a model it built in its own body
    (``model = Model(envs); model.load_state_dict(...); model.eval()``): cleanrl's
    ``evaluate()`` scores a checkpoint that way, whatever the trained model is called."""
    switched = [receiver(c) for c in analysis(ctx).own_calls(helper) if switch_of(c) == "eval"]
    return bool(switched) and all(_built_here(ctx, helper, name) for name in switched)


def _built_here(ctx: LintContext, helper: Function, name: Optional[ast.expr]) -> bool:
    built = _built_by_call(ctx, name)
    if built is None or ctx.enclosing_function(built) is not helper:
        return False
    return not _hands_back_existing(ctx, getattr(built, "value", None))


def _hands_back_existing(ctx: LintContext, call: Optional[ast.expr]) -> bool:
    """``model = current_model()`` where the project's ``current_model`` returns a global or an
    attribute (``return MODEL``, ``return self.model``): the trained model itself, no copy."""
    found = _helper(ctx, call) if isinstance(call, ast.Call) else None
    if found is None:
        return False  # a constructor, ``torch.load``, ``copy.deepcopy``: a model of its own
    owner, function = found
    values = [node.value for node in ast.walk(function) if isinstance(node, ast.Return) and node.value]
    return bool(values) and all(_existing(owner, function, value) for value in values)


def _existing(ctx: LintContext, function: Function, value: ast.expr) -> bool:
    if isinstance(value, ast.Attribute):
        return isinstance(value.value, ast.Name) and value.value.id == "self"
    if not isinstance(value, ast.Name):
        return False
    bound = ctx.binding(value)
    return bound is None or ctx.enclosing_function(bound.stmt) is not function


def _argument_for_switched_param(ctx: LintContext, call: ast.Call, helper: Function) -> Optional[ast.expr]:
    """``evaluate(net, loader)`` where ``evaluate(model, ...)`` calls ``model.eval()`` -> ``net``."""
    params = [a.arg for a in helper.args.args]
    if ctx.enclosing_class(helper) is not None and params:
        params = params[1:]  # ``self``
    for sub in analysis(ctx).own_calls(helper):
        switched = receiver(sub)
        if switch_of(sub) != "eval" or not isinstance(switched, ast.Name):
            continue
        name = switched.id
        if name in params:
            index = params.index(name)
            if index < len(call.args):
                return call.args[index]
            for kw in call.keywords:
                if kw.arg == name:
                    return kw.value
    return None


def _fix(ctx: LintContext, loop: Loop, model: Optional[ast.expr]) -> Optional[Fix]:
    """Insert ``model.train()`` as the first statement of the loop body."""
    if model is None or not loop.body:
        return None
    first = loop.body[0]
    if not ctx.source.alone_on_lines(first):
        return None
    indent = ctx.source.indent_of(first.lineno)
    line = first.lineno - 1
    code = f"{ctx.text(model)}.train()"
    return Fix(
        f"Insert `{code}` at the top of the loop",
        (TextEdit(Span(line, 0, line, 0), f"{indent}{code}{ctx.source.newline}"),),
    )
