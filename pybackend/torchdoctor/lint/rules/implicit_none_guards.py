"""For TD012 (implicit_none.py only): which methods speak without a caller in sight (those of
an ``nn.Module``), which functions torch calls back and whose None is part of the contract
(hooks, ``module.apply`` initialisers), and an ``if``/``elif`` dispatch on one value that cannot fall through,
because a guard raises on every value it has no branch for.

``assert order in (0, 1)`` before ``if order == 0: return a`` / ``elif order == 1: return b``,
or ``if data_format not in ("last", "first"): raise ...`` in ``__init__`` before a ``forward``
that dispatches on ``self.data_format``: the end of the function is never reached (found on
diffusers' schedulers and ConvNeXt's LayerNorm). A guard that allows a value the chain does not
test (``dims in (1, 2, 3)``, branches for 2 and 3) leaves the fall-through: still reported.

Two more ends that are not the bug: an ``if p: ... elif q: ...`` chain right under ``if p or q:``
(YOLO's ``bbox_iou``), whose branches cover every way into it, and the end of an ``except
ImportError`` handler around an import (an optional dependency: None is "not installed").
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterable, List, Optional, Tuple

from ..bindings import Function
from ..context import LintContext, walk
from ..flow import block_completes, statement_completes

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


def coalesce(ctx: LintContext, func: Function) -> bool:
    """``def default(*values): for v in values: if v is not None: return v``: the first value
    given that is not None. It gives None only when every value it was given is None, so the
    None is its caller's, not a path the function forgot (quiet even when a caller multiplies)."""
    last = func.body[-1] if func.body else None
    rest = func.args.vararg
    if rest is None or not isinstance(last, (ast.For, ast.AsyncFor)) or not isinstance(last.target, ast.Name):
        return False
    if not (isinstance(last.iter, ast.Name) and last.iter.id == rest.arg):
        return False
    returns = [r.value for r in ctx.own_nodes(func, ast.Return)]
    return bool(returns) and all(isinstance(v, ast.Name) and v.id == last.target.id for v in returns)


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


def covered_chain(ctx: LintContext, func: Function) -> bool:
    """Whether the end of ``func`` is out of reach once an ``if p: ... elif q: ...`` chain
    right under ``if p or q:`` whose branches all return or raise counts as an end: the
    enclosing test says one of ``p``, ``q`` holds (``bbox_iou`` in YOLO copies: ``if CIoU or
    DIoU:`` then ``if DIoU: return ...`` / ``elif CIoU: return ...``, ``else: return iou``)."""
    return not _falls_through(ctx, func.body, None, optional=False)


def optional_import(ctx: LintContext, func: Function) -> bool:
    """For a ``func`` known to fall off its end: whether every way there runs through an
    ``except ImportError`` (or ``ModuleNotFoundError``) handler of a ``try`` that imports. Its
    None means "the extra is not installed" (``try: import albumentations as A ... return
    A.Compose(steps)`` / ``except ImportError: log.warning(...)``); another handler's is a bug."""
    return not _falls_through(ctx, func.body, None, optional=True)


def _falls_through(ctx: LintContext, body: List[ast.stmt], known: Optional[ast.expr], optional: bool) -> bool:
    """``flow.block_completes`` knowing two more things: ``known`` (the test of the ``if`` whose
    body this is) holds at its start, so a chain that covers it ends when its branches do; with
    ``optional``, the handlers of optional imports end too. Only ``if``, ``with`` and ``try``
    are looked into; any other statement is left to ``flow``."""
    for i, stmt in enumerate(body):
        branches = _covering_chain(ctx, known, stmt, body, i)
        if branches is not None:
            ends = not any(_falls_through(ctx, block, test, optional) for test, block in branches)
        else:
            ends = not _stmt_falls_through(ctx, stmt, optional)
        if ends:
            return False
    return True


def _stmt_falls_through(ctx: LintContext, stmt: ast.stmt, optional: bool) -> bool:
    if isinstance(stmt, ast.If) and not isinstance(stmt.test, ast.Constant):  # ``if True:``: left to flow
        return _falls_through(ctx, stmt.body, stmt.test, optional) or _falls_through(ctx, stmt.orelse, None, optional)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return _falls_through(ctx, stmt.body, None, optional)
    if isinstance(stmt, ast.Try):
        return _try_falls_through(ctx, stmt, optional)
    return statement_completes(ctx, stmt)


def _try_falls_through(ctx: LintContext, stmt: ast.Try, optional: bool) -> bool:
    """As ``flow`` decides a ``try``, a handler of an optional import not counted when ``optional``."""
    if stmt.finalbody and not _falls_through(ctx, stmt.finalbody, None, optional):
        return False
    if _falls_through(ctx, stmt.body, None, optional) and _falls_through(ctx, stmt.orelse, None, optional):
        return True
    imports = optional and any(isinstance(n, (ast.Import, ast.ImportFrom)) for s in stmt.body for n in walk(s))
    return any(
        _falls_through(ctx, h.body, None, optional) and not (imports and _catches_import_error(h))
        for h in stmt.handlers
    )


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    """``except ImportError:``, ``except (ImportError, ModuleNotFoundError) as e:``; not a bare
    ``except:`` nor a tuple with another type (``except (ImportError, OSError):``)."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = [k.id if isinstance(k, ast.Name) else getattr(k, "attr", None) for k in kinds]
    return bool(names) and all(n in _IMPORT_ERRORS for n in names)


def _covering_chain(
    ctx: LintContext, known: Optional[ast.expr], stmt: ast.stmt, body: List[ast.stmt], at: int
) -> Optional[List[Tuple[ast.expr, List[ast.stmt]]]]:
    """``(test, body)`` of each branch of ``stmt`` when it is an ``if``/``elif`` chain whose tests
    are exactly the operands of ``known`` == ``p or q`` (in any order, compared by their AST
    dump; without calls, which may answer differently twice; not reassigned by the statements
    before it, ``body[:at]``: sliced only here, not for every statement of a long body). A final ``else`` is never reached then; ``if a or b or c:`` around ``if a:
    ... elif b: ...`` is not covered."""
    if not (isinstance(known, ast.BoolOp) and isinstance(known.op, ast.Or)) or not isinstance(stmt, ast.If):
        return None
    branches: List[Tuple[ast.expr, List[ast.stmt]]] = []
    node: Optional[ast.stmt] = stmt
    while isinstance(node, ast.If):
        branches.append((node.test, node.body))
        node = node.orelse[0] if len(node.orelse) == 1 else None
    operands = {ast.dump(v) for v in known.values}
    if {ast.dump(test) for test, _ in branches} != operands or any(map(_may_change, known.values)):
        return None
    return None if _rebinds(ctx, body[:at], known) else branches


_ACTIVE = (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)


def _may_change(test: ast.expr) -> bool:
    """A test that may answer differently when asked again (a call, ``:=``)."""
    return any(isinstance(n, _ACTIVE) for n in walk(test))


def _rebinds(ctx: LintContext, stmts: List[ast.stmt], test: ast.expr) -> bool:
    """Whether ``stmts`` (those before the chain in the enclosing ``if``'s body) assign a name
    or attribute that ``test`` reads: the chain then tests other values than the guard did."""
    read = {ctx.text(n) for n in walk(test) if isinstance(n, (ast.Name, ast.Attribute))}
    return any(
        isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Store) and ctx.text(n) in read
        for s in stmts
        for n in walk(s)
    )


def type_dispatch(ctx: LintContext, func: Function) -> Optional[str]:
    """The parameter a converter dispatches on by type, when ``func`` is only that: ``if
    isinstance(data, np.ndarray): return data`` / ``if isinstance(data, torch.Tensor): return
    data.numpy()``, two branches or more, each ending. Another type gives None, but a caller
    that passes one of the types tested gets a value: the end is reported at the ``def`` (raise a
    ``TypeError`` there), not at every use of the result."""
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    names = set()
    for stmt in body:
        test = stmt.test if isinstance(stmt, ast.If) and not stmt.orelse else None
        if not (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and isinstance(stmt, ast.If)
            and not block_completes(ctx, stmt.body)
        ):
            return None
        names.add(test.args[0].id)
    return names.pop() if len(body) >= 2 and len(names) == 1 else None
