"""For TD012 (implicit_none.py only): which methods speak without a caller in sight (those of
an ``nn.Module``), and an ``if``/``elif`` dispatch on one value that cannot fall through,
because a guard raises on every value it has no branch for.

``assert order in (0, 1)`` before ``if order == 0: return a`` / ``elif order == 1: return b``,
or ``if data_format not in ("last", "first"): raise ...`` in ``__init__`` before a ``forward``
that dispatches on ``self.data_format``: the end of the function is never reached (found on
diffusers' schedulers and ConvNeXt's LayerNorm). A guard that allows a value the chain does not
test (``dims in (1, 2, 3)``, branches for 2 and 3) leaves the fall-through: still reported.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterable, Optional, Tuple

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
    for body in places:
        for stmt in _statements(body):
            allowed = _guard(stmt)
            if allowed is not None and allowed[0] == chain[0] and allowed[1] <= chain[1]:
                return True
    return False


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
