"""What the rules know about the PyTorch (and scikit-learn) API, as names and predicates.

Everything here is recognised by qualified name (``torch.nn.CrossEntropyLoss``), so aliases
work. Where a script passes objects in from elsewhere we fall back to the conventional
variable names (``optimizer``, ``opt_g``, ``scaler``) only for the roles where such names
are unambiguous; a rule never fires on a name guess alone when a wrong guess would put a
finding on correct code.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

from .context import LintContext, terminal_name

# -- losses -------------------------------------------------------------------------

CROSS_ENTROPY = "cross_entropy"
NLL = "nll"
BCE = "bce"
BCE_LOGITS = "bce_logits"

LOSS_CLASSES = {
    "torch.nn.CrossEntropyLoss": CROSS_ENTROPY,
    "torch.nn.NLLLoss": NLL,
    "torch.nn.BCELoss": BCE,
    "torch.nn.BCEWithLogitsLoss": BCE_LOGITS,
}
LOSS_FUNCTIONS = {
    "torch.nn.functional.cross_entropy": CROSS_ENTROPY,
    "torch.nn.functional.nll_loss": NLL,
    "torch.nn.functional.binary_cross_entropy": BCE,
    "torch.nn.functional.binary_cross_entropy_with_logits": BCE_LOGITS,
}
LOSS_DISPLAY = {
    CROSS_ENTROPY: "CrossEntropyLoss",
    NLL: "NLLLoss",
    BCE: "BCELoss",
    BCE_LOGITS: "BCEWithLogitsLoss",
}
# Method names that are never a loss module's attribute name in practice.
_TENSOR_METHODS = frozenset(
    {
        "view",
        "reshape",
        "to",
        "float",
        "long",
        "item",
        "sum",
        "mean",
        "size",
        "argmax",
        "max",
        "min",
        "detach",
        "cpu",
        "cuda",
        "numpy",
        "append",
        "squeeze",
        "unsqueeze",
        "backward",
        "step",
        "zero_grad",
        "parameters",
        "eq",
        "format",
        "get",
        "items",
        "keys",
        "values",
        "clone",
        "contiguous",
        "permute",
        "transpose",
        "flatten",
        "expand",
        "softmax",
        "log_softmax",
        "sigmoid",
        "pow",
        "abs",
        "std",
        "var",
        "numel",
        "dim",
        "type",
        "half",
        "double",
        "int",
        "bool",
        "tolist",
        "fill_",
        "zero_",
        "add_",
        "mul_",
        "copy_",
        "train",
        "eval",
        "state_dict",
        "load_state_dict",
        "split",
        "chunk",
        "join",
        "startswith",
        "endswith",
        "update",
        "extend",
        "insert",
        "pop",
        "sort",
    }
)
# Any other torch loss, for "is this a loss tensor" questions.
_FUNCTIONAL_LOSS = re.compile(r"^torch\.nn\.functional\.\w*(loss|entropy\w*|_div)$")


def loss_call(ctx: LintContext, call: ast.Call) -> Optional[Tuple[str, Optional[ast.expr], Optional[ast.expr]]]:
    """``(kind, input, target)`` when ``call`` computes one of the classification losses."""
    cache = ctx.shared("torchapi.loss_call", dict)
    if call not in cache:
        cache[call] = _loss_call(ctx, call)
    return cache[call]


def loss_calls(ctx: LintContext) -> List[Tuple[ast.Call, str, Optional[ast.expr], Optional[ast.expr]]]:
    """``(call, kind, input, target)`` for every classification-loss call of the file, in source
    order: found once, for all the rules that read them."""

    def find() -> List[Tuple[ast.Call, str, Optional[ast.expr], Optional[ast.expr]]]:
        found = []
        # ``loss_call``'s cache, filled inline: every call of the file is asked
        cache: Dict[ast.Call, Optional[Tuple[str, Optional[ast.expr], Optional[ast.expr]]]] = ctx.shared(
            "torchapi.loss_call", dict
        )
        candidates = _loss_candidates(ctx)
        for call in ctx.calls if candidates is None else candidates:
            if call in cache:
                loss = cache[call]
            else:
                loss = cache[call] = _loss_call(ctx, call)
            if loss is not None:
                found.append((call, *loss))
        return found

    return ctx.shared("torchapi.loss_calls", find)


def _loss_candidates(ctx: LintContext) -> Optional[List[ast.Call]]:
    """The calls ``_loss_call`` may accept, in file order (None: every call). A loss module is
    found through ``class_of``, which ends at a construction in this file: when the file builds
    no loss class, only a call spelled like a loss function (its last name, or an import's) can
    be one, and the 51k calls of a long script need not each have their class resolved."""
    if ctx.star_imports or ctx.calls_of_class(LOSS_CLASSES):
        return None
    return ctx.calls_named_any([qual.rpartition(".")[2] for qual in LOSS_FUNCTIONS] + list(ctx.imports.aliases))


def _loss_call(ctx: LintContext, call: ast.Call):
    if not call.args and not call.keywords:
        return None  # no input and no target: nothing a rule could check (``opt.step()``, ``model.eval()``)
    qual = ctx.qualname(call.func)
    if qual is not None:  # an imported callable: a loss function, or not a loss at all
        kind = LOSS_FUNCTIONS.get(qual)
    elif isinstance(call.func, ast.Attribute) and call.func.attr in _TENSOR_METHODS:
        kind = None  # ``x.view(...)``, ``out.sum()``: never a loss module
    else:
        kind = LOSS_CLASSES.get(ctx.class_of(call.func) or "")
    if kind is None:
        return None
    return kind, _argument(call, 0, "input"), _argument(call, 1, "target")


def is_loss_value(ctx: LintContext, expr: ast.AST) -> bool:
    """Whether ``expr`` (a call) computes a loss tensor: any torch loss module or function."""
    if not isinstance(expr, ast.Call):
        return False
    if _FUNCTIONAL_LOSS.match(ctx.qualname(expr.func) or ""):
        return True
    cls = ctx.class_of(expr.func) or ""
    return cls.startswith("torch.nn.") and cls.endswith("Loss")


def _argument(call: ast.Call, index: int, keyword: str) -> Optional[ast.expr]:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return None


def keyword(call: ast.Call, name: str) -> Optional[ast.keyword]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def has_star_kwargs(call: ast.Call) -> bool:
    return any(kw.arg is None for kw in call.keywords)


# -- gradients and optimizers ----------------------------------------------------------

_OPTIMIZER_NAME = re.compile(r"(^|_)opt(?!ion)|optim", re.IGNORECASE)
_SCHEDULER_NAME = re.compile(r"sched|lr_|warmup", re.IGNORECASE)
_SCALER_CLASSES = frozenset({"torch.amp.GradScaler", "torch.cuda.amp.GradScaler"})


def is_backward(ctx: LintContext, call: ast.Call) -> bool:
    """``loss.backward()``, ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``,
    ``self.manual_backward(loss)``, ``torch.autograd.backward(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        # ``x.step()``, ``x.to(d)``: an attribute named otherwise is never torch.autograd.backward.
        return func.attr in ("backward", "manual_backward")
    return ctx.qualname(func) == "torch.autograd.backward"


def backward_calls(ctx: LintContext) -> List[ast.Call]:
    """Every call of the file ``is_backward`` accepts, in source order, found once. Only calls
    named ``backward`` / ``manual_backward`` (or a local alias of ``torch.autograd.backward``)
    can be one: looked up by name instead of testing every call of a long script."""

    def find() -> List[ast.Call]:
        names = {"backward", "manual_backward"} | ctx.imports.aliases_of("torch.autograd.backward")
        found = [c for name in names for c in ctx.calls_named(name) if is_backward(ctx, c)]
        return sorted(found, key=lambda c: (c.lineno, c.col_offset))

    return ctx.shared("torchapi.backward_calls", find)


def step_calls(ctx: LintContext) -> List[ast.Call]:
    """Every ``x.step(...)`` call of the file, and every ``x.step_*(...)`` (a schedule wrapper's
    ``optimizer.step_and_update_lr()``), in source order (``stepped_optimizer`` needs one)."""
    names = ["step"] + [n for n in ctx.call_names() if n.startswith(_STEP_PREFIX)]
    return [c for c in ctx.calls_named_any(names) if isinstance(c.func, ast.Attribute)]


def unscaled(expr: ast.expr) -> ast.expr:
    """The loss under AMP's scaling: ``scaler.scale(loss)`` (at any depth) -> ``loss``."""
    while (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "scale" and expr.args
    ):
        expr = expr.args[0]
    return expr


def is_optimizer(ctx: LintContext, expr: ast.expr) -> bool:
    """Whether ``expr`` is an optimizer: built from ``torch.optim`` here, or named like one."""
    cls = ctx.class_of(expr)
    if cls is not None:
        if cls.startswith("torch.optim.lr_scheduler."):
            return False
        if cls.startswith("torch.optim."):
            return True
        if _optimizer_wrapper(ctx.local_class(cls)):
            return True
    name = terminal_name(expr)
    return bool(_OPTIMIZER_NAME.search(name)) and not _SCHEDULER_NAME.search(name)


def _optimizer_wrapper(cls: Optional[ast.ClassDef]) -> bool:
    """A class of the project that clears and steps, as an optimizer does: a warm-up schedule
    wrapping Adam with ``zero_grad()`` and ``step_and_update_lr()``, whatever the name of the
    attribute that holds it (``self.optim_schedule``). A learning-rate scheduler only steps."""
    if cls is None:
        return False
    methods = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    clear = methods.get("zero_grad")
    if clear is None or not _calls_method(clear, "zero_grad"):
        return False  # its zero_grad hands on to an optimizer's
    return any(_wraps_a_step(m) for name, m in methods.items() if name == "step" or name.startswith(_STEP_PREFIX))


def _wraps_a_step(method: ast.AST) -> bool:
    """An optimizer's step: no argument it needs (``closure=None`` at most; an agent's
    ``step(state)`` is an environment's), not a scheduler's, handing on to a ``.step()`` and
    neither backpropagating nor clearing itself (a trainer's step that does all three is no
    optimizer: its loop needs no ``zero_grad``)."""
    args = method.args  # type: ignore[attr-defined]
    if len(args.args) - len(args.defaults) > 1 or "sched" in method.name.lower():  # type: ignore[attr-defined]
        return False
    if _calls_method(method, "backward") or _calls_method(method, "zero_grad"):
        return False
    return _calls_method(method, "step")


def _calls_method(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == name
        for sub in ast.walk(node)
    )


def is_scaler(ctx: LintContext, expr: ast.expr) -> bool:
    cls = ctx.class_of(expr)
    if cls is not None:
        return cls in _SCALER_CLASSES
    return "scaler" in terminal_name(expr).lower()


def stepped_optimizer(ctx: LintContext, call: ast.Call) -> Optional[ast.expr]:
    """The optimizer an ``optimizer.step()`` / ``scaler.step(optimizer)`` call updates."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr.startswith(_STEP_PREFIX):  # ``optimizer.step_and_update_lr()``: a wrapper's step
        return func.value if is_optimizer(ctx, func.value) and not is_scaler(ctx, func.value) else None
    if func.attr != "step":
        return None
    if call.args and is_scaler(ctx, func.value):
        return call.args[0]
    if is_optimizer(ctx, func.value):
        return func.value
    return None


_STEP_PREFIX = "step_"
_GRAD_WRITERS = ("zero_", "fill_", "detach_", "requires_grad_")  # ``p.grad.zero_()`` and the like


def may_clear_by_name(name: str) -> bool:
    """Whether a call whose callee's last name is ``name`` can be one ``zero_grad_target`` accepts."""
    return name in _GRAD_WRITERS or "zero_grad" in name or "clear_grad" in name


def zero_grad_target(ctx: LintContext, node: ast.AST) -> Tuple[bool, Optional[ast.expr]]:
    """``(True, receiver)`` when ``node`` clears gradients.

    Receivers: ``optimizer.zero_grad()`` -> the optimizer; ``model.zero_grad()`` and
    ``p.grad = None`` / ``p.grad.zero_()`` -> None (clears something we cannot tie to one
    optimizer, so callers treat it as clearing all of them).
    """
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr == "zero_grad":
                return True, func.value if is_optimizer(ctx, func.value) else None
            if func.attr in _GRAD_WRITERS and _mentions_grad(func.value):
                return True, None
            if "zero_grad" in func.attr or "clear_grad" in func.attr:
                return True, None
        elif isinstance(func, ast.Name) and ("zero_grad" in func.id or "clear_grad" in func.id):
            return True, None
        return False, None  # a call is no assignment: skip the test below (asked of every call of a loop)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in targets):
            return True, None
    return False, None


def _mentions_grad(expr: ast.AST) -> bool:
    while isinstance(expr, ast.Attribute):
        if expr.attr == "grad":
            return True
        expr = expr.value
    return False


# -- autograd modes ---------------------------------------------------------------------

NO_GRAD = "no_grad"
ENABLE_GRAD = "enable_grad"

_NO_GRAD_NAMES = frozenset({"torch.no_grad", "torch.inference_mode"})


def grad_mode_of(ctx: LintContext, expr: ast.AST) -> Optional[str]:
    """``NO_GRAD`` for ``torch.no_grad()`` / ``torch.inference_mode()`` /
    ``torch.set_grad_enabled(False)``; ``ENABLE_GRAD`` for the opposites; else None."""
    call = expr if isinstance(expr, ast.Call) else None
    qual = ctx.qualname(call.func if call is not None else expr)
    if qual in _NO_GRAD_NAMES:
        if qual == "torch.inference_mode" and call is not None and call.args:
            return _bool_mode(call.args[0], NO_GRAD, ENABLE_GRAD)
        return NO_GRAD
    if qual == "torch.enable_grad":
        return ENABLE_GRAD
    if qual == "torch.set_grad_enabled" and call is not None and call.args:
        return _bool_mode(call.args[0], ENABLE_GRAD, NO_GRAD)
    return None


def _bool_mode(arg: ast.AST, if_true: str, if_false: str) -> Optional[str]:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
        return if_true if arg.value else if_false
    return None  # decided at run time: we cannot say


def grad_mode_at(ctx: LintContext, node: ast.AST) -> Optional[str]:
    """The autograd mode the innermost ``with`` or decorator around ``node`` sets, within
    ``node``'s function (None when nothing in the function sets one)."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            for item in anc.items:
                mode = grad_mode_of(ctx, item.context_expr)
                if mode is not None:
                    return mode
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in anc.decorator_list:
                mode = grad_mode_of(ctx, deco)
                if mode is not None:
                    return mode
            return None
        if isinstance(anc, (ast.Lambda, ast.ClassDef)):
            return None
    return None


# -- modules and data --------------------------------------------------------------------

TENSOR_FACTORIES = frozenset(
    "torch." + name
    for name in (
        "randn",
        "rand",
        "zeros",
        "ones",
        "empty",
        "full",
        "tensor",
        "arange",
        "randint",
        "linspace",
        "logspace",
        "eye",
        "randperm",
        "normal",
        "from_numpy",
        "as_tensor",
        "FloatTensor",
        "LongTensor",
        "Tensor",
    )
)
# Factories whose result is always on the CPU, whatever keyword is passed.
CPU_ONLY_FACTORIES = frozenset({"torch.from_numpy", "torch.FloatTensor", "torch.LongTensor", "torch.Tensor"})

DATALOADER = "torch.utils.data.DataLoader"

_MODEL_NAME = re.compile(
    r"model|net|classifier|encoder|decoder|generator|discriminator|backbone|policy|critic", re.IGNORECASE
)


# Calls that return an object saved earlier: its class is not visible in the call.
_UNPICKLERS = frozenset({"torch.load", "torch.jit.load", "pickle.load", "copy.deepcopy"})
# Hugging Face classes that are no network: a tokenizer's call records no graph (peft's benchmark).
_HF_NOT_NETWORKS = re.compile(r"^transformers\.\w*(Tokenizer(Fast)?|Processor|FeatureExtractor|Config)(\.from_\w+)?$")


def is_model(ctx: LintContext, expr: ast.expr) -> bool:
    """Whether ``expr`` refers to a network: a torch module or local ``nn.Module`` subclass
    built here, or (when built elsewhere) a variable named like one."""
    cls = ctx.class_of(expr)
    if cls in _UNPICKLERS:
        cls = None  # ``model = torch.load(f)``: whatever was saved; judge by the name below
    if cls is not None:
        local = ctx.local_class(cls)
        if local is not None:
            return ctx.context_for(local).is_module_class(local)
        if cls.endswith("Loss") or cls.startswith("torch.nn.functional.") or _HF_NOT_NETWORKS.match(cls):
            return False  # criteria are modules too, but not the network being trained
        if cls.startswith(("torch.nn.", "torchvision.models.", "transformers.", "timm.")):
            return True
        if not ctx.is_project_class(cls):
            return False
        # A class of the user's project whose file we cannot read: judge by the name, as below.
    if isinstance(expr, ast.Name):
        if ctx.imports.is_module_alias(expr.id):
            return False  # an imported function such as ``build_model``
        bound = ctx.binding(expr)
        if bound is not None and bound.kind in ("def", "class"):
            return False
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return bool(_MODEL_NAME.search(terminal_name(expr)))
    return False


# Calls a loop wraps its iterable in (``zip`` too, which wraps several).
ITERABLE_WRAPPERS = frozenset(("enumerate", "tqdm", "trange", "iter", "zip", "track", "islice"))


def unwrap_iterable(ctx: LintContext, expr: ast.expr) -> ast.expr:
    """``enumerate(loader)``, ``tqdm(loader)``, ``zip(a, b)`` -> the first loader-like argument."""
    while isinstance(expr, ast.Call) and expr.args and terminal_name(expr.func) in ITERABLE_WRAPPERS:
        expr = expr.args[0]
    return expr
