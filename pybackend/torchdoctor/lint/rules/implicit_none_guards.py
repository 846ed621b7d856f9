"""For TD012 (implicit_none.py only): which methods speak without a caller in sight (those of
an ``nn.Module``), which functions torch calls back and whose None is part of the contract
(hooks, ``module.apply`` initialisers), and an ``if``/``elif`` dispatch on one value that cannot fall through,
because a guard raises on every value it has no branch for.

``assert order in (0, 1)`` before ``if order == 0: return a`` / ``elif order == 1: return b``,
or ``if data_format not in ("last", "first"): raise ...`` in ``__init__`` before a ``forward``
that dispatches on ``self.data_format``: the end of the function is never reached (found on
diffusers' schedulers and ConvNeXt's LayerNorm). A guard that allows a value the chain does not
test (``dims in (1, 2, 3)``, branches for 2 and 3) leaves the fall-through: still reported.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterable, List, Optional, Tuple

from ..bindings import Function
from ..context import LintContext
from ..flow import block_completes

# (last name of the value tested, the constants tested or allowed)
Values = Tuple[str, FrozenSet[object]]


def module_method(ctx: LintContext, func: Function) -> bool:
    """A method of an ``nn.Module`` subclass: the module's output (``forward``, reached through
    ``module(x)``, which no call site shows) or a step of it, never a "not handled"."""
    owner = ctx.enclosing_class(func)  # an autograd Function's backward gives None for "no gradient"
    return (
        owner is not None
        and ctx.is_module_class(owner)
        and not any(b.endswith("Function") for b in ctx.base_names(owner))
    )


# Calls that take a callback whose None means "leave it as it is": a forward hook's None keeps
# the output, a pre-hook's the input, a gradient hook's the gradient; ``module.apply(fn)``
# ignores what ``fn`` returns. Spelled out (not matched on ``register_*hook``) to use the
# callee-name index rather than a walk over every call of the file.
_TAKES_CALLBACK = (
    "register_forward_hook register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook "
    "register_backward_hook register_hook register_post_accumulate_grad_hook register_multi_grad_hook "
    "register_module_forward_hook register_module_forward_pre_hook register_module_full_backward_hook "
    "register_module_full_backward_pre_hook register_state_dict_pre_hook register_state_dict_post_hook "
    "register_load_state_dict_pre_hook register_load_state_dict_post_hook register_step_pre_hook "
    "register_step_post_hook apply"
).split()


def registered_callback(ctx: LintContext, func: Function) -> bool:
    """Whether ``func`` is handed, anywhere in the file, to a hook registration or to
    ``.apply``: ``m.register_forward_hook(self._hook)``, ``p.register_hook(grad_hook)``,
    ``model.apply(init_weights)``, also through ``functools.partial(self._hook, name)`` or
    ``lambda m, i, o: self._hook(m, i, o, name)``. A method is matched by its attribute name, a
    function by its name."""
    method = ctx.enclosing_class(func) is not None
    for call in ctx.calls_named_any(_TAKES_CALLBACK):
        if _is_apply(call) and (len(call.args) != 1 or call.keywords):
            continue  # ``Module.apply(fn)`` takes one function; ``df.apply(f, axis=1)`` uses the result
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            ref = _callback_reference(arg)
            if method and isinstance(ref, ast.Attribute) and ref.attr == func.name:
                return True
            if not method and isinstance(ref, ast.Name) and ref.id == func.name:
                return True
    return False


def _is_apply(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "apply"


def _callback_reference(arg: ast.expr) -> ast.expr:
    """The function ``arg`` hands over: itself, the function a ``partial(...)`` wraps, or the one
    a lambda calls and returns the result of."""
    if isinstance(arg, ast.Lambda) and isinstance(arg.body, ast.Call):
        return arg.body.func
    if isinstance(arg, ast.Call) and arg.args and isinstance(arg.func, (ast.Name, ast.Attribute)):
        callee = arg.func.id if isinstance(arg.func, ast.Name) else arg.func.attr
        if callee == "partial":
            return arg.args[0]
    return arg


# Names of searches: ``find(name)`` returning the match from inside its loop means "not found"
# by falling off after it.
_LOOKUP_PREFIXES = ("find", "get", "lookup", "search")


def lookup(ctx: LintContext, func: Function, example: ast.Return) -> bool:
    """A search: the value is returned from inside the loop that ends the function (the end is
    reached only when nothing matched), and either the name says so (``find``, ``get``, ...;
    a ``for`` or a ``while`` loop) or the value is the ``for`` loop's own item, the first one
    that matched (``for level in sorted(levels): if x >= level: return level``)."""
    last = func.body[-1]
    if not isinstance(last, (ast.For, ast.AsyncFor, ast.While)):
        return False
    inside = [r.value for r in ctx.own_nodes(func, ast.Return) if last.lineno <= r.lineno <= (last.end_lineno or 0)]
    if not inside or example.lineno > (last.end_lineno or 0):
        return False  # nothing returned in the loop, or a value returned after it
    if func.name.lstrip("_").lower().startswith(_LOOKUP_PREFIXES):
        return True
    target = getattr(last, "target", None)
    return isinstance(target, ast.Name) and all(isinstance(v, ast.Name) and v.id == target.id for v in inside)


def guarded_dispatch(ctx: LintContext, func: Function) -> bool:
    """Whether ``func`` ends with a dispatch chain that a guard makes exhaustive: an
    ``assert x in (...)`` or ``if x not in (...): raise`` earlier in ``func``, or in its class's
    ``__init__`` (the value matched by its last name: ``self.config.mode`` and ``mode``)."""
    chain = _chain(ctx, func.body[-1])
    if chain is None:
        return False
    places: list = [func.body[:-1]]
    owner = ctx.enclosing_class(func)
    init = ctx.method(owner, "__init__") if owner is not None else None
    if init is not None:
        places.append(init.body)
    guards = [_guard(stmt) for body in places for stmt in _statements(body)]
    guards += [_literal(ctx, arg) for f in (func, init) if f is not None for arg in _parameters(f)]
    return any(g is not None and g[0] == chain[0] and g[1] <= chain[1] for g in guards)


def _parameters(func: Function) -> List[ast.arg]:
    args = func.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _literal(ctx: LintContext, arg: ast.arg) -> Optional[Values]:
    """A parameter annotated ``Literal["a", "b"]``: the values its type allows (diffusers'
    schedulers declare ``time_shift_type: Literal["exponential", "linear"]`` in ``__init__``
    and dispatch on ``self.config.time_shift_type``)."""
    note = arg.annotation
    if not (isinstance(note, ast.Subscript) and ctx.text(note.value).split(".")[-1] == "Literal"):
        return None
    items = note.slice.elts if isinstance(note.slice, ast.Tuple) else [note.slice]
    if not items or not all(isinstance(i, ast.Constant) for i in items):
        return None
    return arg.arg, frozenset(i.value for i in items)  # type: ignore[attr-defined]  # all Constants


def _chain(ctx: LintContext, stmt: ast.stmt) -> Optional[Values]:
    """``(name, constants)`` of an ``if``/``elif`` chain without ``else`` whose every test
    compares one value with constants (``x == "a"``, ``x in ("b", "c")``) and whose every branch
    ends (returns or raises)."""
    name: Optional[str] = None
    tested: set = set()
    node: ast.stmt = stmt
    while True:
        if not isinstance(node, ast.If) or block_completes(ctx, node.body):
            return None
        found = _compared(node.test, (ast.Eq, ast.In))
        if found is None or (name is not None and found[0] != name):
            return None
        name, tested = found[0], tested | found[1]
        if not node.orelse:
            return name, frozenset(tested)
        if len(node.orelse) != 1:
            return None
        node = node.orelse[0]


def _guard(stmt: ast.stmt) -> Optional[Values]:
    """``assert x in (...)`` or ``if x not in (...): ... raise``: ``(name, allowed constants)``."""
    if isinstance(stmt, ast.Assert):
        return _compared(stmt.test, (ast.In,))
    if isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], ast.Raise) and not stmt.orelse:
        return _compared(stmt.test, (ast.NotIn,))
    return None


def _compared(test: ast.expr, ops: tuple) -> Optional[Values]:
    """``x == c`` / ``x in (c1, c2)`` / ``x not in {...}`` with constants: ``(last name of x, constants)``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ops)):
        return None
    left, right = test.left, test.comparators[0]
    name = left.id if isinstance(left, ast.Name) else left.attr if isinstance(left, ast.Attribute) else None
    items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
    if name is None or not items or not all(isinstance(i, ast.Constant) for i in items):
        return None
    if isinstance(test.ops[0], ast.Eq) and len(items) != 1:
        return None
    return name, frozenset(i.value for i in items)  # type: ignore[attr-defined]  # all Constants


def _statements(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of ``body`` and of the blocks nested in it (not in nested functions)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, field, []) or [])
