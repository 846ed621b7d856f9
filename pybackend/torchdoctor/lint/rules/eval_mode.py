"""TD008, TD009: an evaluation loop without ``model.eval()`` / without ``torch.no_grad()``.

An evaluation loop is a loop over validation or test data (``val_loader``, ``test_dl``...), or
a loop inside a function named for evaluation (``evaluate``, ``validate``, ``test``...), that
calls a model and never computes gradients. Lightning's ``validation_step`` and friends are
left alone: the trainer sets the mode and disables gradients itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Union

from .. import torchapi
from ..bindings import Function
from ..context import LintContext, Loop, receiver, terminal_name
from ..model import INFORMATION, WARNING
from ..modes import mode_matters, switch_of
from ..registry import Reporter, rule
from ..training import analysis

# Where an evaluation loop's switches are looked for: its function, or the module.
Scope = Union[Function, ast.Module]
# How many calls up a switch or a ``no_grad`` is looked for around an evaluation function.
_CALLER_DEPTH = 3

_EVAL_FIRST_WORDS = frozenset(
    {
        "evaluate",
        "evaluation",
        "eval",
        "validate",
        "validation",
        "valid",
        "val",
        "test",
        "predict",
        "prediction",
        "inference",
        "infer",
    }
)
_EVAL_ANY_WORDS = frozenset({"evaluate", "evaluation", "validate", "validation", "inference"})
_EVAL_DATA = re.compile(
    r"(^|_)(val|valid|validation|test|testing|eval|evaluation|dev|holdout)(_|loader|set|data|dl|ds|$)"
)


_WEIGHTS = re.compile(r"pretrain|weight|checkpoint|ckpt|state|load", re.IGNORECASE)


@dataclass
class EvalLoop:
    loop: Loop
    model_call: ast.Call
    owner: Optional[Function]  # the evaluation function holding the loop, when there is one

    @property
    def where(self) -> str:
        return f"`{self.owner.name}()`" if self.owner is not None else "this evaluation loop"


@rule(
    "TD008",
    "eval-without-eval-mode",
    "Evaluation loop runs the model without model.eval()",
    WARNING,
    """
A model is in training mode until `model.eval()` is called. Evaluated in training mode,
dropout keeps dropping activations (noisy, pessimistic metrics) and batch-norm normalises with
the evaluation batch's own statistics **and updates its running averages with evaluation
data**. Nothing fails; the numbers are just wrong. Call `model.eval()` before the loop (and
`model.train()` before training resumes).
""",
)
def check_eval_mode(ctx: LintContext, report: Reporter) -> None:
    for found in eval_loops(ctx):
        model = found.model_call.func
        if not mode_matters(ctx, model) or _mode_set(ctx, found):
            continue
        report.report(
            found.model_call,
            f"{found.where} runs `{ctx.text(model)}` on evaluation data without `{ctx.text(model)}.eval()`: "
            f"dropout stays on and batch-norm uses (and updates) batch statistics, so the metrics are off.",
        )


@rule(
    "TD009",
    "eval-without-no-grad",
    "Evaluation loop runs the model with autograd on",
    INFORMATION,
    """
Outside `torch.no_grad()` (or `torch.inference_mode()`), every forward pass records an autograd
graph and keeps its activations alive until the outputs are dropped. An evaluation loop never
calls `backward()`, so this only costs memory and time: larger eval batches fail with
out-of-memory, and accumulated outputs keep whole graphs alive. Wrap the loop in
`with torch.no_grad():` or decorate the function with `@torch.no_grad()`.
""",
)
def check_no_grad(ctx: LintContext, report: Reporter) -> None:
    for found in eval_loops(ctx):
        if _grad_disabled(ctx, found):
            continue
        model = found.model_call.func
        report.report(
            found.model_call,
            f"`{ctx.text(model)}` runs with autograd on in {found.where}: each batch records a graph that is "
            f"never used. Wrap the loop in `with torch.no_grad():`.{_volatile_note(ctx, found)}",
        )


def _volatile_note(ctx: LintContext, found: EvalLoop) -> str:
    """Older tutorials disable autograd with ``Variable(x, volatile=True)``, which has done
    nothing since PyTorch 0.4 (a warning says so once): name it, since the author thinks the
    loop is already covered."""
    for call in ctx.own_nodes(found.loop, ast.Call):
        for keyword in call.keywords:
            if keyword.arg == "volatile" and isinstance(keyword.value, ast.Constant) and keyword.value.value:
                return (
                    f" `volatile=True` (line {call.lineno}) has had no effect since PyTorch 0.4: "
                    "`torch.no_grad()` replaced it."
                )
    return ""


# -- finding evaluation loops ---------------------------------------------------------------


def eval_loops(ctx: LintContext) -> List[EvalLoop]:
    return ctx.shared("eval_loops", lambda: _find_eval_loops(ctx))


def _find_eval_loops(ctx: LintContext) -> List[EvalLoop]:
    training = analysis(ctx)
    found: List[EvalLoop] = []
    taken = set()
    in_test_file = is_test_file(ctx.path)
    for loop in ctx.loops:  # source order: outer loops come before the loops they contain
        outer = ctx.enclosing_loops(loop)
        if any(o in taken for o in outer):
            continue  # part of an evaluation loop already found
        owner = ctx.enclosing_function(loop)
        if owner is not None and _is_framework_hook(ctx, owner):
            continue
        in_eval_function = _is_eval_function(owner, in_test_file) and not outer
        if not (in_eval_function or _iterates_eval_data(ctx, loop)):
            continue
        if training.backpropagates(loop) or training.steps(loop):
            continue  # it trains, itself or through a helper (``optimizer_step(loss, ...)``)
        body_calls = [c for c in training.own_calls(loop) if loop in ctx.enclosing_loops(c)]  # not the header
        call = _first_model_call(ctx, body_calls)
        if call is None or _fresh_model_of(ctx, owner, call.func):
            continue
        taken.add(loop)
        found.append(EvalLoop(loop, call, owner if _is_eval_function(owner, in_test_file) else None))
    return found


def _fresh_model_of(ctx: LintContext, owner: Optional[Function], model: ast.expr) -> bool:
    """``decoder = AttnDecoder(10, 10, 2)`` built in the function itself and given no weights
    there (nothing loaded into it, not passed to any call): a demo of shapes on an untrained
    model (PyTorchZeroToAll's ``test()``), not an evaluation whose metrics could be off."""
    if owner is None or not isinstance(model, ast.Name):
        return False
    built = ctx.value_of(model)
    if not isinstance(built, ast.Call) or ctx.enclosing_function(built) is not owner:
        return False
    maker = terminal_name(built.func)
    if not maker[:1].isupper() or ctx.local_function_called(built) is not None:
        return False  # ``load_model(path)``, ``Net.from_pretrained(...)``: weights come with it
    if any(k.arg is None or _WEIGHTS.search(k.arg) for k in built.keywords):
        return False  # ``ViT(pretrained=True)``, ``Net(checkpoint=path)``, ``Net(**cfg)``
    for call in analysis(ctx).own_calls(owner):  # asked only of a model built right here
        if call is built:
            continue
        passed = [*call.args, *(k.value for k in call.keywords)]
        if any(isinstance(a, ast.Name) and a.id == model.id for a in passed):
            return False  # ``train(decoder, data)``, ``load_checkpoint(decoder, path)``
        if isinstance(call.func, ast.Attribute) and terminal_name(call.func.value) == model.id:
            if call.func.attr.startswith("load"):
                return False  # ``decoder.load_state_dict(...)``
    return True


def is_test_file(path: Optional[str]) -> bool:
    """A file pytest collects (``test_*.py``, ``*_test.py``, ``conftest.py``, under ``tests/``)."""
    if not path:
        return False
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test") for p in parts[:-1])
    )


def _is_eval_function(func: Optional[Function], in_test_file: bool = False) -> bool:
    if func is None:
        return False
    words = [w for w in func.name.lower().split("_") if w]
    if not words:
        return False
    if words[0] == "test" and len(words) > 1 and (in_test_file or not func.args.args):
        # pytest's test_* functions (in a test file, or taking no arguments: fixtures come as
        # arguments, but a notebook's ``test_model(net, loader)`` evaluates a model).
        return False
    return words[0] in _EVAL_FIRST_WORDS or any(w in _EVAL_ANY_WORDS for w in words)


def _is_framework_hook(ctx: LintContext, func: Function) -> bool:
    """Lightning-style ``validation_step`` / ``on_validation_epoch_end``: the framework sets modes."""
    if ctx.enclosing_class(func) is None:
        return False
    name = func.name
    return name.endswith("_step") or name.startswith("on_") or name.endswith("_epoch_end")


def _iterates_eval_data(ctx: LintContext, loop: Loop) -> bool:
    """``for x in val_loader``, or ``for _ in range(args.val_steps)`` / ``range(len(test_x))``:
    a count of evaluation batches (the batches fetched inside the loop)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    source = torchapi.unwrap_iterable(ctx, loop.iter)
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id == "range":
        return any(
            _EVAL_DATA.search(terminal_name(n).lower())
            for arg in source.args
            for n in ast.walk(arg)
            if isinstance(n, (ast.Name, ast.Attribute))
        )
    return bool(_EVAL_DATA.search(terminal_name(source).lower()))


def _first_model_call(ctx: LintContext, calls: List[ast.Call]) -> Optional[ast.Call]:
    for call in calls:
        if isinstance(call.func, (ast.Name, ast.Attribute)) and torchapi.is_model(ctx, call.func):
            if isinstance(call.func, ast.Attribute) and ctx.qualname(call.func) is not None:
                continue  # ``torch.nn.functional.x(...)`` is a function, not a model
            if ctx.local_function_called(call) is not None:
                continue  # ``self._enable_resnets_(...)``: a method of the class, named like a model
            return call
    return None


# -- what makes a loop fine ---------------------------------------------------------------


def _mode_set(ctx: LintContext, found: EvalLoop) -> bool:
    """``.eval()`` runs before the loop (in its function, or at every call site of its
    evaluation function), or an eval-mode context manager surrounds it."""
    scope: Scope = found.owner or ctx.enclosing_function(found.loop) or ctx.tree
    model = found.model_call.func
    if _switches_before(ctx, scope, found.loop, "eval", model) or _in_eval_context(ctx, found.loop):
        return True
    built_in_eval = _loaded_in_eval_mode(ctx, model) or _switched_as_built(ctx, model)
    if built_in_eval and not _switches_before(ctx, scope, found.loop, "train"):
        return True
    if found.owner is None:
        return False
    return _on_every_path(
        ctx,
        found.owner,
        lambda s: _switches_before(ctx, ctx.enclosing_function(s) or ctx.tree, s, "eval") or _in_eval_context(ctx, s),
    )


def _on_every_path(ctx: LintContext, func: Function, holds: Callable[[ast.Call], bool], depth: int = 0) -> bool:
    """Every call of ``func`` in the file is a site where ``holds``, or lies in a function every
    call of which is, up to ``_CALLER_DEPTH`` calls up: ``evaluate()`` called under ``no_grad``
    directly, or through an ``evaluate_all()`` only ever called under it (a text-recognition
    benchmark's ``validation()`` two calls below its ``no_grad``)."""
    sites = ctx.call_sites(func)
    if not sites or depth > _CALLER_DEPTH:
        return False
    for site in sites:
        if holds(site):
            continue
        outer = ctx.enclosing_function(site)
        if outer is None or outer is func or not _on_every_path(ctx, outer, holds, depth + 1):
            return False
    return True


def _switches_before(
    ctx: LintContext, scope: Scope, point: Union[ast.stmt, ast.expr], mode: str, model: Optional[ast.expr] = None
) -> bool:
    """Some switch to ``mode`` (``x.eval()`` / ``x.train()``) in ``scope`` runs before or inside
    ``point``, directly or in a helper defined in this file. With ``model``, a direct switch
    counts only on that model or another network (``criterion.eval()`` does not put the model
    in eval mode: detr's evaluate() calls both)."""
    end = (point.end_lineno, point.end_col_offset)
    training = analysis(ctx)
    for call in training.own_calls(scope):
        if (call.lineno, call.col_offset) > end:
            break
        if switch_of(call) == mode and (model is None or _switches_model(ctx, call, model)):
            return True
        helper = ctx.local_function_called(call)
        if helper is not None and any(switch_of(c) == mode for c in training.own_calls(helper)):
            return True
    return False


def _switches_model(ctx: LintContext, call: ast.Call, model: ast.expr) -> bool:
    switched = receiver(call)
    return ctx.text(switched) == ctx.text(model) or torchapi.is_model(ctx, switched)


def _loaded_in_eval_mode(ctx: LintContext, model: ast.expr) -> bool:
    """``from_pretrained(...)`` (Hugging Face) returns the model already in eval mode."""
    built = ctx.construction_of(model)
    return built is not None and terminal_name(built.func) == "from_pretrained"


def _switched_as_built(ctx: LintContext, model: ast.expr) -> bool:
    """``net = build().eval()`` or ``Net().eval().to(device)``: the switch is part of the value
    assigned, so no ``net.eval()`` statement follows (pytorch-book's ``test()``)."""
    value = ctx.value_of(model)
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if switch_of(value) == "eval":
            return True
        value = value.func.value
    return False


def _in_eval_context(ctx: LintContext, node: ast.AST) -> bool:
    """``with eval_mode(model):`` style helpers."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            if any("eval" in terminal_name(item.context_expr).lower() for item in anc.items):
                return True
    return False


def _grad_disabled(ctx: LintContext, found: EvalLoop) -> bool:
    if torchapi.grad_mode_at(ctx, found.model_call) == torchapi.NO_GRAD:
        return True
    scope: Scope = found.owner or ctx.enclosing_function(found.loop) or ctx.tree
    if _set_grad_disabled_before(ctx, scope, found.loop):
        return True
    if found.owner is None:
        return False
    return _on_every_path(ctx, found.owner, lambda s: torchapi.grad_mode_at(ctx, s) == torchapi.NO_GRAD)


def _set_grad_disabled_before(ctx: LintContext, scope: Scope, loop: Loop) -> bool:
    for call in analysis(ctx).own_calls(scope):
        if (call.lineno, call.col_offset) >= (loop.lineno, loop.col_offset):
            break
        if ctx.qualname(call.func) == "torch.set_grad_enabled" and torchapi.grad_mode_of(ctx, call) == torchapi.NO_GRAD:
            return True
    return False
