"""Can control reach the end of a block? (for "falls off the end of a function").

A conservative, syntactic answer: ``return`` and ``raise`` end a path, loops that cannot exit
(``while True`` without ``break``) end it, calls such as ``sys.exit()`` end it, ``if`` needs
every branch to end, ``try`` needs the body and every handler to end (or a ``finally`` that
does). Everything else may complete, so the answer errs on "may complete" only where Python
itself would.
"""

from __future__ import annotations

import ast
from typing import List

from .context import LintContext, Loop

_NO_RETURN = frozenset(
    {
        "sys.exit",
        "os._exit",
        "os.abort",
        "pytest.fail",
        "pytest.skip",
        "pytest.exit",
        "typing.assert_never",
        "typing_extensions.assert_never",
    }
)
_NO_RETURN_BUILTINS = frozenset({"exit", "quit"})
_MATCH = getattr(ast, "Match", None)  # Python >= 3.10 source may use ``match``
_TRY_STAR = getattr(ast, "TryStar", None)


def block_completes(ctx: LintContext, stmts: List[ast.stmt]) -> bool:
    """Whether running ``stmts`` can fall out of the bottom (not by return/raise/break/continue)."""
    for stmt in stmts:
        if not statement_completes(ctx, stmt):
            return False
    return True


def statement_completes(ctx: LintContext, stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return False
    if isinstance(stmt, ast.If):
        return _if_completes(ctx, stmt)
    if isinstance(stmt, ast.While):
        if _is_true(stmt.test):
            return _has_break(stmt)
        return _has_break(stmt) or block_completes(ctx, stmt.orelse)
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return _has_break(stmt) or block_completes(ctx, stmt.orelse)
    if isinstance(stmt, ast.Try) or (_TRY_STAR is not None and isinstance(stmt, _TRY_STAR)):
        return _try_completes(ctx, stmt)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return block_completes(ctx, stmt.body)
    if _MATCH is not None and isinstance(stmt, _MATCH):
        return _match_completes(ctx, stmt)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return not _never_returns(ctx, stmt.value)
    if isinstance(stmt, ast.Assert):
        return not (isinstance(stmt.test, ast.Constant) and not stmt.test.value)
    return True


def _if_completes(ctx: LintContext, stmt: ast.If) -> bool:
    if _is_true(stmt.test):
        return block_completes(ctx, stmt.body)
    if isinstance(stmt.test, ast.Constant) and not stmt.test.value:
        return block_completes(ctx, stmt.orelse)
    return block_completes(ctx, stmt.body) or block_completes(ctx, stmt.orelse)


def _try_completes(ctx: LintContext, stmt) -> bool:
    if stmt.finalbody and not block_completes(ctx, stmt.finalbody):
        return False
    body = block_completes(ctx, stmt.body) and block_completes(ctx, stmt.orelse)
    return body or any(block_completes(ctx, h.body) for h in stmt.handlers)


def _match_completes(ctx: LintContext, stmt) -> bool:
    if any(block_completes(ctx, case.body) for case in stmt.cases):
        return True
    return not any(_irrefutable(case) for case in stmt.cases)


def _irrefutable(case) -> bool:
    pattern = case.pattern
    return case.guard is None and type(pattern).__name__ == "MatchAs" and pattern.pattern is None


def _is_true(test: ast.AST) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


def _has_break(loop: Loop) -> bool:
    """A ``break`` that exits ``loop`` itself (not a nested loop, not a nested function).

    Only statements are visited: ``break`` is one, so expressions need not be walked."""
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            stack.extend(node.orelse)  # a nested loop's else belongs to this loop
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, field, ()))
        for handler in getattr(node, "handlers", ()):
            stack.extend(handler.body)
        for case in getattr(node, "cases", ()):
            stack.extend(case.body)
    return False


def _never_returns(ctx: LintContext, call: ast.Call, depth: int = 0) -> bool:
    if ctx.qualname(call.func) in _NO_RETURN:
        return True
    if (
        isinstance(call.func, ast.Name)
        and call.func.id in _NO_RETURN_BUILTINS
        and call.func.id not in ctx.imports.aliases
    ):
        return True
    return _local_no_return(ctx, call)


def _local_no_return(ctx: LintContext, call: ast.Call) -> bool:
    """A function of this file annotated ``-> NoReturn`` / ``-> Never``, or whose every path
    raises (a ``fail(msg)`` helper)."""
    func = ctx.local_function_called(call)
    if func is None:
        return False
    if func.returns is not None and ctx.text(func.returns).split(".")[-1] in ("NoReturn", "Never"):
        return True
    cache = ctx.shared("flow.no_return", dict)
    if func not in cache:
        cache[func] = False  # recursion guard: assume it returns while we look
        returns = bool(ctx.own_nodes(func, ast.Return))
        cache[func] = not returns and not block_completes(ctx, func.body)
    return cache[func]
