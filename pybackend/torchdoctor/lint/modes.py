"""Train/eval mode facts: does this model have layers that behave differently in eval mode,
and where is a mode switched.

``model.eval()`` only matters for layers that read ``self.training`` (dropout, batch norm,
and modules built with a ``dropout=`` argument). When we can see the whole model and it has
none, forgetting ``eval()`` changes nothing, and the mode rules stay quiet about it.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Optional

from .context import LintContext, walk

# torch.nn layers whose output does not depend on train/eval mode.
_MODE_FREE = re.compile(
    r"^torch\.nn\.(Linear|LazyLinear|Bilinear|Conv[123]d|ConvTranspose[123]d|LazyConv\w*|ReLU|ReLU6|GELU|SiLU|"
    r"Mish|ELU|SELU|CELU|LeakyReLU|PReLU|Tanh|Sigmoid|Softmax|LogSoftmax|Softplus|Hardtanh|Hardswish|Flatten|"
    r"Unflatten|Identity|Embedding|EmbeddingBag|LayerNorm|GroupNorm|RMSNorm|MaxPool[123]d|AvgPool[123]d|"
    r"AdaptiveAvgPool[123]d|AdaptiveMaxPool[123]d|Upsample|PixelShuffle|ZeroPad2d|ConstantPad[123]d|"
    r"LSTM|GRU|RNN|LSTMCell|GRUCell|RNNCell|MultiheadAttention|ModuleList|ModuleDict|ParameterList)$"
)
_MAX_DEPTH = 6


def mode_matters(ctx: LintContext, model: ast.expr) -> bool:
    """False only when the whole model is visible and has no mode-dependent layer."""
    built = ctx.construction_of(model)
    if built is None:
        return True
    return _built_matters(ctx, built, 0)


def _built_matters(ctx: LintContext, built: ast.Call, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return True
    cls = ctx.callee_class(built)
    if cls is None:
        return True
    if any(kw.arg == "dropout" for kw in built.keywords):
        return True
    if cls == "torch.nn.Sequential":
        return any(not isinstance(a, ast.Call) or _built_matters(ctx, a, depth + 1) for a in built.args)
    if _MODE_FREE.match(cls):
        return False
    local = ctx.local_class(cls)
    if local is None:
        return True
    if _class_matters(ctx.context_for(local), local, depth):
        return True
    return any(_part_matters(ctx, arg, depth) for arg in [*built.args, *(k.value for k in built.keywords)])


def _part_matters(ctx: LintContext, arg: ast.expr, depth: int) -> bool:
    """A module handed to the constructor: ``Seq2Seq(encoder, decoder, device)`` holds the
    encoder and decoder built beside it, and their dropout is the model's. Each part is judged
    once (parts shared by many models made this exponential), a part that contains itself
    (``c = Wrap(c)``) adds nothing, and a ``torch.nn`` argument counts only when it is a layer
    (an ``nn.Parameter``, a loss or an ``nn.init`` call holds no dropout)."""
    part = ctx.construction_of(arg) if isinstance(arg, (ast.Name, ast.Attribute)) else arg
    if not isinstance(part, ast.Call):
        return False
    cls = ctx.callee_class(part) or ""
    local = ctx.local_class(cls)
    if cls.startswith("torch.nn."):
        if not _NN_LAYER.match(cls):
            return False
    elif local is None or not ctx.context_for(local).is_module_class(local):
        return False
    judged: Dict[int, bool] = ctx.shared("modes.parts", dict)
    if id(part) not in judged:
        judged[id(part)] = False  # while it is judged: a part inside itself adds nothing
        judged[id(part)] = _built_matters(ctx, part, depth)
    return judged[id(part)]


# A layer class of ``torch.nn`` itself (``torch.nn.Dropout``, ``torch.nn.BatchNorm2d``): not a
# loss, not a parameter container, not a function of ``nn.init``/``nn.utils``/``nn.functional``.
_NN_LAYER = re.compile(r"torch\.nn\.(?!Parameter|Buffer|Uninitialized)[A-Z]\w*(?<!Loss)$")


def _class_matters(ctx: LintContext, cls: ast.ClassDef, depth: int) -> bool:
    """Whether ``cls`` behaves differently in train and eval mode (walked once per class)."""
    cache: Dict[ast.ClassDef, bool] = ctx.shared("class_mode_matters", dict)
    if cls not in cache:
        cache[cls] = True  # a class that builds itself: assume it matters
        cache[cls] = _walk_class_matters(ctx, cls, depth)
    return cache[cls]


def _walk_class_matters(ctx: LintContext, cls: ast.ClassDef, depth: int) -> bool:
    itself = "local:" + cls.name  # ``model = GPT(config)`` in its own ``from_pretrained``: no new layer
    for node in walk(cls):
        if isinstance(node, ast.Attribute) and node.attr == "training":
            return True
        if isinstance(node, ast.Call):
            qual = ctx.qualname(node.func) or ""
            if qual.startswith("torch.nn.functional.") and ("dropout" in qual or "batch_norm" in qual):
                return True
            if ctx.callee_class(node) == itself:
                continue
            if _constructs_layer(ctx, node) and _built_matters(ctx, node, depth + 1):
                return True
    return any(not _is_module_base(ctx, base) for base in cls.bases)


def _constructs_layer(ctx: LintContext, call: ast.Call) -> bool:
    cls = ctx.callee_class(call)
    if not cls:
        return False
    return cls.startswith("torch.nn.") and cls[9:10].isupper() or cls.startswith("local:")


def _is_module_base(ctx: LintContext, base: ast.AST) -> bool:
    qual = ctx.qualname(base) or ""
    return qual == "torch.nn.Module"


def switch_of(call: ast.Call) -> Optional[str]:
    """ "eval" for ``x.eval()`` / ``x.train(False)``; "train" for ``x.train()`` / ``x.train(True)``."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "eval" and not call.args and not call.keywords:
        return "eval"
    if func.attr != "train":
        return None
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if arg is None:
        return "train"
    if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
        return "train" if arg.value else "eval"
    return "train"  # ``model.train(is_training)``: decided at run time; assume it is handled
