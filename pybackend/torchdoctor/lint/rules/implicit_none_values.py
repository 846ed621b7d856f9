"""For TD012 (implicit_none.py only): which returned values may be tensors.

Without a caller that uses the result, TD012 speaks only of values that may be tensors: not a
constant, a string, a predicate, a container display, the attribute of a dataset or of a
configuration object, a layer built by a factory (``get_down_block`` returning
``DownBlock2D(...)``), nor the result of a function whose return annotation names a type that
is no tensor (``-> torch.dtype``, ``-> nn.Module``, ``-> "AttentionProcessor"``), a NumPy array, nor
anything of a function that returns ``int(...)`` or an f-string on another path. Certainly no
tensor, so never reported: an object of a class of a library outside torch imported by the
function itself (``import albumentations as A`` then ``return A.Compose(steps)``).
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from ..bindings import Function
from ..context import LintContext, walk

# Return values that are plainly not tensors: predicates and formatting helpers that fall
# off the end are a style matter, not the bug this rule is for.
_PLAIN_CALLS = frozenset(
    "len str int float bool repr isinstance list dict tuple set sorted format hasattr callable issubclass any all".split()
)


def _builds_modules(ctx: LintContext, func: Function) -> bool:
    """A factory of layers that dispatches: it returns two or more values, each built by a
    class call, of a module class of this file or of a class imported from outside torch
    (``get_down_block`` returning ``DownBlock2D(...)`` or ``CrossAttnDownBlock2D(...)`` by
    name): layers, not tensors. One construction returned (``conv3x3`` giving ``nn.Conv2d``)
    still counts as a possible tensor, as before."""
    values = [r.value for r in ctx.own_nodes(func, ast.Return) if not is_none(r.value)]
    return len(values) > 1 and all(_builds_module(ctx, v) for v in values)


def _builds_module(ctx: LintContext, value: Optional[ast.expr]) -> bool:
    if not isinstance(value, ast.Call) or not isinstance(value.func, (ast.Name, ast.Attribute)):
        return False
    name = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
    if not name[:1].isupper():
        return False
    local = ctx.classes.get(name) if isinstance(value.func, ast.Name) else None
    if local is not None:
        return ctx.is_module_class(local)  # a local dataclass of outputs holds tensors
    qual = ctx.qualname(value.func)
    return qual is not None and not qual.endswith(_TENSOR_CLASSES)


def _built_by_local_import(ctx: LintContext, func: Function, value: ast.AST) -> bool:
    """``A.Compose(steps)`` / ``Compose(steps)`` (a class call, as ``_builds_module`` reads it)
    whose root name ``func`` itself imports from a library outside torch and the project: a
    transform, a tokenizer, a client, an optional extra's object; not a tensor. Functions of such
    a library may give tensors (``einops.rearrange``), and so may torch's classes or the
    project's own (a dataclass of outputs): not these."""
    if not isinstance(value, ast.Call) or not _builds_module(ctx, value):
        return False
    root = value.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or ctx.binding(root) is not None:
        return False  # a parameter or an assignment hides the import
    module = _imported_by(ctx, func, root.id)
    if module is None or module.startswith(("torch", ".")):  # torch, torchvision, torchaudio, ...
        return False
    return not ctx.is_project_class(f"{module}.{ctx.text(value.func).split('.')[-1]}")


def _imported_by(ctx: LintContext, func: Function, name: str) -> Optional[str]:
    """The module an ``import`` in ``func``'s own body binds ``name`` from, or None."""
    for node in walk(func):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or ctx.enclosing_function(node) is not func:
            continue
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound == name:
                return alias.name if isinstance(node, ast.Import) else "." * node.level + (node.module or "")
    return None


# Classes whose instances are tensors (``nn.Parameter(...)``, ``torch.FloatTensor(...)``).
_TENSOR_CLASSES = ("Tensor", "Parameter", "Variable", "Buffer")


# Return annotations of numbers, dtypes and devices, which are never tensors (``-> torch.dtype`` in
# diffusers' get_parameter_dtype); other classes are left as possible tensors or holders of them.
_SCALAR_NOTE = re.compile(r"^(torch\.)?(dtype|device|bool|int|float|complex)$")


# Receivers whose attributes are configuration or bookkeeping, not tensors (``dataset.coco``,
# ``args.lr``, ``self.config.x``).
_NOT_TENSOR_HOLDERS = re.compile(
    r"^(data(set)?|ds|cfg|conf(ig)?|args|opts?|options|hparams|params|meta(data)?|info|"
    r"settings|env|logger|writer|path|file|tokenizer|processor)$",
    re.IGNORECASE,
)


def plausibly_tensor(ctx: LintContext, value: ast.AST, func: Optional[Function] = None) -> bool:
    """Without a caller to go by, say something only for values that may be tensors: not the
    attribute of a dataset or configuration object, nor the result of a function whose return
    annotation names another type (``-> torch.dtype``, ``-> nn.Module``, ``-> "Processor"``)."""
    if func is not None and func.returns is not None and _SCALAR_NOTE.match(ctx.text(func.returns).strip("'\"")):
        return False
    if func is not None and _builds_modules(ctx, func):
        return False
    if func is not None and any(_converted(r.value) for r in ctx.own_nodes(func, ast.Return)):
        return False
    if isinstance(value, ast.expr) and _from_other_library(ctx, value):
        return False
    if isinstance(value, ast.Attribute):
        root = value.value
        while isinstance(root, ast.Attribute):
            if _NOT_TENSOR_HOLDERS.match(root.attr):
                return False
            root = root.value
        if isinstance(root, ast.Name) and _NOT_TENSOR_HOLDERS.match(root.id):
            return False
        if isinstance(value.value, ast.Attribute) and _NOT_TENSOR_HOLDERS.match(value.value.attr):
            return False
    return True


# Libraries whose calls give arrays, frames, images, strings or web responses, never tensors.
_NOT_TENSOR_LIBRARIES = ("numpy.", "pandas.", "PIL.", "cv2.", "json.", "flask.")


def _from_other_library(ctx: LintContext, value: ast.expr) -> bool:
    """``image = np.array(img)`` then ``return image``; ``return jsonify(res)`` in a Flask view
    (deepspeech.pytorch's server); ``np.random.randint(n) if explore else np.argmax(q)`` (DeepRL's
    ``epsilon_greedy``): a value made by such a library (both branches of a conditional), never a tensor."""
    if isinstance(value, ast.IfExp):
        return _from_other_library(ctx, value.body) and _from_other_library(ctx, value.orelse)
    built = ctx.value_of(value)
    return isinstance(built, ast.Call) and (ctx.qualname(built.func) or "").startswith(_NOT_TENSOR_LIBRARIES)


def _converted(value: Optional[ast.expr]) -> bool:
    """``int(row["label"]) - 1``, ``float(x) if ok else 0.0``: a return made a Python number or
    string on purpose tells what the function gives on its other paths too (peft's
    ``extract_multi_choice_target_index``, whose other values are list indices). A bare
    constant does not: a loss function's ``return 0`` fallback says nothing of its tensor."""
    if isinstance(value, ast.IfExp):
        return _converted(value.body) or _converted(value.orelse)
    if isinstance(value, ast.BinOp):  # ``total / len(loader)`` is a tensor still: both sides count
        sides = (value.left, value.right)
        return any(map(_converted, sides)) and all(_converted(v) or isinstance(v, ast.Constant) for v in sides)
    if isinstance(value, ast.JoinedStr):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _CONVERSIONS


# Builtins whose result is a Python number or string, never a tensor.
_CONVERSIONS = frozenset({"int", "float", "str", "len", "repr"})


def is_none(value: Optional[ast.AST]) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


# Expressions whose value is never a tensor.
_NOT_TENSORS = (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Compare, ast.BoolOp, ast.Lambda)
_NOT_TENSOR_COMPREHENSIONS = (ast.DictComp, ast.ListComp, ast.SetComp)


def may_be_tensor(value: ast.AST, ctx: Optional[LintContext] = None, func: Optional[Function] = None) -> bool:
    """False for values that are never tensors: constants, displays, predicates, and (given
    ``ctx`` and the returning ``func``) an object built by a class ``func`` imports from outside torch."""
    if isinstance(value, _NOT_TENSORS) or isinstance(value, _NOT_TENSOR_COMPREHENSIONS):
        return False
    if isinstance(value, ast.IfExp):  # ``0 if row["answer"] else 1``
        return may_be_tensor(value.body, ctx, func) or may_be_tensor(value.orelse, ctx, func)
    if ctx is not None and func is not None and _built_by_local_import(ctx, func, value):
        return False
    if isinstance(value, ast.UnaryOp) and (isinstance(value.op, ast.Not) or isinstance(value.operand, ast.Constant)):
        return False  # ``not x``; ``-1``, a status code (``ast`` spells it as minus one)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _PLAIN_CALLS:
        return False
    return True


_CHECKS = (ast.If, ast.While, ast.IfExp, ast.Assert)


def is_none_check(ctx: LintContext, node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """``x is None``, ``not x``, ``x and y``, ``if x:``, ``isinstance(x, ...)``: ``node`` read as a test."""
    if isinstance(parent, ast.Compare) and any(
        isinstance(c, ast.Constant) and c.value is None for c in parent.comparators
    ):
        return True
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, ast.BoolOp):
        return True
    if isinstance(parent, _CHECKS) and getattr(parent, "test", None) is node:
        return True
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "bool", "hasattr", "callable", "getattr")
    ):
        return True
    return False


def tensor_use(ctx: LintContext, node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """``x.attr``, ``x[i]``, ``x + y``, ``-x``, ``x(...)``, ``torch.cat([x, ...])``-style arguments."""
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return not parent.attr.startswith("__")  # ``None.__repr__()`` works
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return True
    if isinstance(parent, ast.BinOp):
        return True
    if isinstance(parent, ast.UnaryOp) and not isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, ast.Call) and parent.func is node:
        return True
    if isinstance(parent, (ast.List, ast.Tuple)):  # ``torch.cat([x, y])``
        node, parent = parent, ctx.parents.get(parent)
    if isinstance(parent, ast.Call) and node in parent.args:
        qual = ctx.qualname(parent.func) or ""
        return qual.startswith("torch.") and qual not in ("torch.save", "torch.is_tensor")
    return False
