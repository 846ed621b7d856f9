"""TD012: a function that returns a value on some paths and falls off its end on others.

The path that falls off returns ``None``. Nothing fails there: the ``None`` travels on and
breaks much later (``'NoneType' object has no attribute 'unsqueeze'`` deep in a forward pass),
or is silently skipped by an ``if x:`` check. This is the bug of seed 004.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..context import LintContext
from ..flow import block_completes
from ..model import Span, WARNING
from ..registry import Reporter, rule

# Return values that are plainly not tensors: predicates and formatting helpers that fall
# off the end are a style matter, not the bug this rule is for.
_PLAIN_CALLS = frozenset({"len", "str", "int", "float", "bool", "repr", "isinstance", "list", "dict", "tuple", "set",
                          "sorted", "format", "hasattr", "callable", "issubclass", "any", "all"})
_SKIPPED = frozenset({"__exit__", "__aexit__", "__init__", "__post_init__", "__del__", "__setattr__", "__delattr__"})


@rule(
    "TD012",
    "implicit-none-return",
    "Function returns a value on some paths and falls off the end (None) on others",
    WARNING,
    """
When a function returns a tensor on some branches and simply ends on another, that branch
returns `None`. Nothing fails where it happens: the `None` travels on and breaks far away
(`'NoneType' object has no attribute ...` in a later forward pass), or an `if emb:` check
silently skips work. End every path explicitly: return a real fallback value, or `raise` an
error that says which input was unexpected. If `None` is intended, write `return None` so
readers (and this rule) can see it.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    if not _uses_torch(ctx):
        return
    for func in ctx.functions:
        if func.name in _SKIPPED or _is_stub(func) or _declares_none(ctx, func):
            continue
        if ctx.own_nodes(func, ast.Yield, ast.YieldFrom):
            continue  # generators end with StopIteration, not None
        returns = [n for n in ctx.own_nodes(func, ast.Return) if not _is_none(n.value)]
        if not returns or not any(_may_be_tensor(r.value) for r in returns):
            continue
        if not block_completes(ctx, func.body):
            continue
        example = next(r for r in returns if _may_be_tensor(r.value))
        last = func.body[-1]
        report.report(
            _name_span(ctx, func),
            f"`{func.name}()` returns `{_short(ctx.text(example.value))}` (line {example.lineno}) but can also reach "
            f"its end (line {last.end_lineno or last.lineno}) and return None: callers get None on that path. "
            f"Return a fallback or raise.",
        )


def _declares_none(ctx: LintContext, func) -> bool:
    """``-> Optional[Tensor]`` / ``-> Tensor | None``: the author says None is a valid result."""
    if func.returns is None:
        return False
    text = ctx.text(func.returns)
    return "Optional" in text or "None" in text


def _uses_torch(ctx: LintContext) -> bool:
    return any(v == "torch" or v.startswith("torch.") for v in ctx.imports.aliases.values())


def _is_none(value: Optional[ast.AST]) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


def _may_be_tensor(value: ast.AST) -> bool:
    if isinstance(value, (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Compare, ast.BoolOp,
                          ast.Lambda, ast.DictComp, ast.ListComp, ast.SetComp)):
        return False
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _PLAIN_CALLS:
        return False
    return True


def _is_stub(func) -> bool:
    """``...``, ``pass``, docstring-only or ``raise NotImplementedError`` bodies."""
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return not body or all(isinstance(s, (ast.Pass, ast.Raise)) for s in body)


def _name_span(ctx: LintContext, func) -> Span:
    line = func.lineno - 1
    text = ctx.source.line(line)
    keyword = text.find("def ")
    col = text.find(func.name, keyword) if keyword >= 0 else -1
    if col < 0:
        return ctx.source.first_line_span(func)
    return Span(line, col, line, col + len(func.name))


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
