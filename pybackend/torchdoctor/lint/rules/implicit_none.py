"""TD012: a function that returns a value on some paths and falls off its end on others.

The path that falls off returns ``None``. Nothing fails there: the ``None`` travels on and
breaks much later (``'NoneType' object has no attribute 'unsqueeze'`` deep in a forward pass),
or is silently skipped by an ``if x:`` check. This is the bug of seed 004.
"""

from __future__ import annotations

import ast
import builtins
import os
from typing import Dict, List, Optional, Set, Tuple, Union

from ..bindings import Function
from ..context import LintContext, walk
from ..flow import block_completes
from ..model import INFORMATION, WARNING, Span
from ..project import star_modules
from ..registry import Reporter, rule
from ..values import LIBRARIES
from .implicit_none_guards import (
    coalesce,
    covered_chain,
    guarded_dispatch,
    lookup,
    module_method,
    optional_import,
    registered_callback,
    type_dispatch,
)
from .implicit_none_values import is_none, may_be_tensor, plausibly_tensor
from .implicit_none_values import is_none_check as _is_none_check
from .implicit_none_values import tensor_use as _tensor_use

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
    if _uses_torch(ctx):
        _check_own_functions(ctx, report)
    # A caller needs no torch import of its own to use a helper's tensor (``from utils import
    # load_image; load_image(p).unsqueeze(0)``).
    _check_imported_helpers(ctx, report)


def _check_own_functions(ctx: LintContext, report: Reporter) -> None:
    """Each function of this file that falls off its end after returning a tensor, reported at
    its ``def`` with the caller (here or in a file that imports it) that trips over the None."""
    for func in ctx.functions:
        example = _falls_off_after_tensor(ctx, func)
        if example is None:
            continue
        what = _what(ctx, func, example)
        typed = type_dispatch(ctx, func)
        if typed is not None:
            said = f"{what}: it dispatches on the type of `{typed}`; raise a `TypeError` for the others."
            report.report(_name_span(ctx, func), said, severity=INFORMATION)
            continue
        sites = [site for site in ctx.call_sites(func) if not ctx.is_inside(site, func)]
        use, checked = _first_unchecked_use(ctx, sites)
        if use is not None:
            report.report(
                _name_span(ctx, func),
                f"{what}; `{_short(ctx.text(use))}` (line {use.lineno}) uses the result as a tensor without "
                f"checking for None. Return a fallback or raise.",
            )
            continue
        # None is meant: a hook's "as is", a search's "not found", an optional extra's "not
        # installed"; reported above when a caller uses it as a tensor.
        if checked or registered_callback(ctx, func) or lookup(ctx, func, example) or optional_import(ctx, func):
            continue
        if module_method(ctx, func):
            _report_module_method(ctx, report, func, example, what)
            continue
        if not _top_level(ctx, func):
            continue
        elsewhere, checked = _use_in_importers(ctx, func)
        if elsewhere is not None:
            other, use = elsewhere
            report.report(
                _name_span(ctx, func),
                f"{what}; `{_short(other.text(use))}` in {_file(other, ctx)} (line {use.lineno}) uses the result as "
                f"a tensor without checking for None. Return a fallback or raise.",
            )
        elif not checked and example.value is not None and plausibly_tensor(ctx, example.value, func):
            report.report(
                _name_span(ctx, func),
                f"{what}. No caller in this {'project' if ctx.path else 'file'} uses the result as a tensor; if one elsewhere does, return a "
                f"fallback or raise (or write `return None` to say None is meant).",
                severity=INFORMATION,
            )


def _report_module_method(ctx: LintContext, report: Reporter, func: Function, example: ast.Return, what: str) -> None:
    """Information at a module's method that falls off, with no caller in sight that uses it."""
    if example.value is None or not plausibly_tensor(ctx, example.value, func):
        return
    called = "`module(x)` calls it" if func.name == "forward" else "no caller in this file uses the result"
    said = f"{what}. A module's output: {called}; return a fallback or raise (or write `return None` to say None is meant)."
    report.report(_name_span(ctx, func), said, severity=INFORMATION)


def _falls_off_after_tensor(ctx: LintContext, func: Function) -> Optional[ast.Return]:
    """The first ``return <maybe a tensor>`` of ``func`` when another path of it ends without
    a ``return`` (and nothing says None is meant); None otherwise."""
    if func.name in _SKIPPED or _is_hook(ctx, func) or _is_stub(func) or _declares_none(ctx, func):
        return None
    if ctx.own_nodes(func, ast.Yield, ast.YieldFrom) or coalesce(ctx, func):
        return None  # generators end with StopIteration, not None; a coalesce passes a None on
    for ret in ctx.own_nodes(func, ast.Return):
        if is_none(ret.value) or _returns_none(ctx, ret.value) or _recursive(func, ret.value):
            continue  # a recursive call returns what the other paths return
        if may_be_tensor(ret.value, ctx, func):
            ends = not block_completes(ctx, func.body) or guarded_dispatch(ctx, func) or covered_chain(ctx, func)
            return None if ends else ret
    return None


def _recursive(func: Function, value: Optional[ast.expr]) -> bool:
    """``return f(...)`` / ``return self.f(...)`` inside ``f`` (not ``super().f(...)``)."""
    callee = value.func if isinstance(value, ast.Call) else None
    on_self = (
        isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) and callee.value.id in ("self", "cls")
    )
    return getattr(callee, "attr" if on_self else "id", None) == func.name


def _what(ctx: LintContext, func: Function, example: ast.Return, where: str = "") -> str:
    """What ``func`` returns and how it falls off; ``where``: the file, when not this one."""
    assert example.value is not None  # _falls_off_after_tensor returns only valued returns
    line = f"({where} line {example.lineno})" if where else f"(line {example.lineno})"
    return f"`{func.name}()` returns `{_short(ctx.text(example.value))}` {line} {_fall_off(ctx, func)}"


def _file(ctx: LintContext, seen_from: LintContext) -> str:
    """``ctx``'s file as the reader of ``seen_from``'s finding finds it: ``utils.py`` next to
    it, ``lib/helpers.py`` below, ``../train.py`` above."""
    if not ctx.path:
        return "another file"
    if not seen_from.path:
        return os.path.basename(ctx.path)
    return os.path.relpath(os.path.abspath(ctx.path), os.path.dirname(os.path.abspath(seen_from.path)))


def _use_in_importers(ctx: LintContext, func: Function) -> Tuple[Optional[Tuple[LintContext, ast.expr]], bool]:
    """The first use as a tensor, without a None check, of ``func``'s result in another file of
    the project that imports it (with that file's context), and whether some caller checks."""
    if not ctx.path:
        return None, False
    checked = False
    wanted = (os.path.abspath(ctx.path), func.lineno)
    for other in ctx.project.importers(ctx.path, func.name):
        found: Dict[str, Optional[Tuple[str, int]]] = {}
        sites = [c for c in other.calls_named(func.name) if _imported_function(other, c, found) == wanted]
        use, was_checked = _first_unchecked_use(other, sites)
        if use is not None:
            return (other, use), False
        checked = checked or was_checked
    return None, checked


def _imported_function(
    ctx: LintContext, call: ast.Call, found: Dict[str, Optional[Tuple[str, int]]]
) -> Optional[Tuple[str, int]]:
    """``(defining file, line of the def)`` of a module-level function of another project
    file that ``call`` runs (``from utils import embed; embed(x)``, ``utils.embed(x)``,
    ``from utils import *; embed(x)``); ``found`` caches the answer per qualified name."""
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or _shadowed(ctx, root):
        return None
    if ctx.imports.is_module_alias(root.id):
        qual = ctx.qualname(call.func)
        candidates = [qual] if qual is not None and _project_module(qual) else []
    elif isinstance(call.func, ast.Name) and not hasattr(builtins, root.id):
        star = ctx.project.star_source(ctx, root.id)  # the last star import exporting it
        candidates = [f"{star}.{root.id}"] if star and _project_module(star) else []
    else:
        return None
    for qual in candidates:
        if qual not in found:
            hit = ctx.project.find_function(qual, ctx.path)
            found[qual] = (os.path.abspath(hit[0].path), hit[1].lineno) if hit is not None and hit[0].path else None
        if found[qual] is not None:
            return found[qual]
    return None


def _shadowed(ctx: LintContext, name: ast.Name) -> bool:
    """Whether a local binding (a parameter, an assignment, a ``def``) hides the imported
    ``name`` where it is read. Imports are not bindings, so any binding found is such a one;
    at module level only one made before the read counts."""
    bound = ctx.binding(name)
    if bound is None:
        return False
    return ctx.scope_of(name) is not ctx.tree or bound.pos <= (name.lineno, name.col_offset)


# Top-level modules that are never a file of the user's project.
_NOT_PROJECT = frozenset({"torch", "numpy", "os", "sys", "math", "time", "json", "re", "random", "logging"})


def _project_module(qual: str) -> bool:
    return not qual.startswith(LIBRARIES) and qual.split(".")[0] not in _NOT_PROJECT


def _star_imported(ctx: LintContext) -> List[str]:
    """Project modules this file star-imports (``from utils import *``)."""
    return [m for m in star_modules(ctx) if m.strip(".") and _project_module(m)]


def _check_imported_helpers(ctx: LintContext, report: Reporter) -> None:
    """A helper of another file that returns None on a path, used here as a tensor: reported at
    the use, in this file, naming the helper's file and line (where the fix goes)."""
    if not ctx.path:
        return
    project_names = {name for name, target in ctx.imports.aliases.items() if _project_module(target)}
    stars = bool(_star_imported(ctx))
    if not project_names and not stars:
        return
    found: Dict[str, Optional[Tuple[str, int]]] = {}
    sites: Dict[Tuple[str, int], List[ast.Call]] = {}
    for call in ctx.calls:
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or not (
            root.id in project_names or (stars and root is call.func and root.id not in ctx.imports.aliases)
        ):
            continue
        key = _imported_function(ctx, call, found)
        if key is not None:
            sites.setdefault(key, []).append(call)
    for (path, line), calls in sites.items():
        _report_imported_use(ctx, report, path, line, calls)


def _report_imported_use(ctx: LintContext, report: Reporter, path: str, line: int, calls: List[ast.Call]) -> None:
    """The first unchecked tensor use, among ``calls``, of the helper defined at ``path:line``."""
    other = ctx.project.context(path)
    if other is None or not _uses_torch(other):
        return
    func = next((f for f in other.functions if f.lineno == line), None)
    example = _falls_off_after_tensor(other, func) if func is not None else None
    if func is None or example is None or type_dispatch(other, func) is not None:
        return
    use, _ = _first_unchecked_use(ctx, calls)
    if use is None:
        return
    where = _file(other, ctx)
    report.report(
        ctx.source.span(use),
        f"`{_short(ctx.text(use))}` uses the result of `{func.name}()` ({where} line {func.lineno}) as a tensor "
        f"without checking for None: {_what(other, func, example, where)}. Check for None here, or make "
        f"`{func.name}()` return a fallback or raise.",
    )


# Lightning hooks whose ``None`` result means "nothing to add" or "skip this batch".
_HOOKS = frozenset(
    "training_step validation_step test_step predict_step configure_optimizers training_step_end "
    "validation_step_end test_step_end lr_scheduler_step configure_callbacks configure_gradient_clipping".split()
)


def _is_hook(ctx: LintContext, func: Function) -> bool:
    if ctx.enclosing_class(func) is None:
        return False
    name = func.name
    return name in _HOOKS or name.startswith("on_") or name.endswith("_epoch_end")


def _returns_none(ctx: LintContext, value: ast.AST) -> bool:
    """``return helper(x)`` where ``helper`` (a function of this file) never returns a value."""
    if not isinstance(value, ast.Call):
        return False
    target = ctx.local_function_called(value)
    if target is None or ctx.own_nodes(target, ast.Yield, ast.YieldFrom):
        return False
    returns = ctx.own_nodes(target, ast.Return)
    if target.returns is not None and ctx.text(target.returns) != "None":
        return False
    return not _is_stub(target) and all(is_none(r.value) for r in returns)


def _fall_off(ctx: LintContext, func: Function) -> str:
    """How control reaches the end: name the condition when the last statement is a bare ``if``."""
    last = func.body[-1]
    if isinstance(last, ast.If) and not last.orelse:
        return f"but, when `if {_short(ctx.text(last.test))}` is false, ends without a `return` and gives None"
    return "on some paths and ends without a `return` (giving None) on others"


def _top_level(ctx: LintContext, func: Function) -> bool:
    """A module-level function. Methods and nested functions are reached through objects and
    tables this file does not show (dispatchers whose None means "not handled"): without a
    caller in sight, they are left alone."""
    return ctx.enclosing_class(func) is None and ctx.enclosing_function(func) is None


def _first_unchecked_use(ctx: LintContext, sites: List[ast.Call]) -> Tuple[Optional[ast.expr], bool]:
    """``(expression, None)``: the first place a caller of this file uses the result as a
    tensor (attribute, subscript, arithmetic, call) before any None check; (None, checked)."""
    checked = False
    for site in sites:
        parent = ctx.parents.get(site)
        if _tensor_use(ctx, site, parent) and isinstance(parent, ast.expr):  # a tensor use is an expression
            return _widen(ctx, parent), False
        if _is_none_check(ctx, site, parent):
            checked = True
            continue
        stmt = ctx.statement_of(site)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and getattr(stmt, "value", None) is site:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                use = _use_of_name(ctx, targets[0], stmt)
                if isinstance(use, _Checked):
                    checked = True
                elif use is not None:
                    return use, False
            elif len(targets) == 1 and _checked_attribute(ctx, targets[0]):
                checked = True  # ``self.mid_block = get_mid_block(...)``, later ``if self.mid_block is not None``
    return None, checked


def _checked_attribute(ctx: LintContext, target: ast.expr) -> bool:
    """``self.x`` that some method of the class checks for None (``self.x is not None``)."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return False
    func = ctx.enclosing_function(target)
    owner = ctx.enclosing_class(func) if func is not None else None
    return owner is not None and (owner, target.attr) in ctx.shared(
        "td012_none_checked_self", lambda: _none_checked(ctx)
    )


def _none_checked(ctx: LintContext) -> Set[Tuple[ast.AST, str]]:
    """``(class, attribute)`` of every ``self.x`` checked for None in a method and used as a
    tensor only after a check (found once): one method's ``if self.x is not None`` says
    nothing of another method's unchecked ``self.x.sum()``."""
    checks: Dict[Tuple[ast.AST, str], List[ast.Attribute]] = {}
    uses: Dict[Tuple[ast.AST, str], List[ast.Attribute]] = {}
    for node in [n for n in ctx.parents if n.__class__ is ast.Attribute]:  # the index's nodes, no walk
        if not (isinstance(node.value, ast.Name) and node.value.id == "self" and isinstance(node.ctx, ast.Load)):
            continue
        func = ctx.enclosing_function(node)
        owner = ctx.enclosing_class(func) if func is not None else None
        parent = ctx.parents.get(node)
        if owner is not None and _is_none_check(ctx, node, parent):
            checks.setdefault((owner, node.attr), []).append(node)
        elif owner is not None and _tensor_use(ctx, node, parent):
            uses.setdefault((owner, node.attr), []).append(node)
    return {key for key, found in checks.items() if all(_guarded(ctx, use, found) for use in uses.get(key, ()))}


def _guarded(ctx: LintContext, use: ast.AST, checks: List[ast.Attribute]) -> bool:
    """A check of the same attribute in the use's function before it, or in the test of an
    ``if``/conditional expression around it (``self.x.sum() if self.x is not None else 0``)."""
    func = ctx.enclosing_function(use)
    tests = [
        getattr(anc, "test", None) for anc in ctx.ancestors(use) if isinstance(anc, (ast.If, ast.IfExp, ast.While))
    ]
    for check in checks:
        if ctx.enclosing_function(check) is not func:
            continue
        if _position(check) < _position(use) or any(t is not None and _inside_expr(ctx, check, t) for t in tests):
            return True
    return False


def _inside_expr(ctx: LintContext, node: ast.AST, expr: ast.AST) -> bool:
    return node is expr or any(anc is expr for anc in ctx.ancestors(node))


def _position(node: ast.AST) -> Tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _copy_checked(
    ctx: LintContext, name: ast.Name, parent: Optional[ast.AST], scope: ast.AST
) -> Optional[Tuple[int, int]]:
    """Where a copy of ``name`` (``best = mask``, ``self.mask = mask``) is first checked for
    None later in the scope, or None: the check guards the original as well."""
    if not (isinstance(parent, ast.Assign) and parent.value is name and len(parent.targets) == 1):
        return None
    target = parent.targets[0]
    if not isinstance(target, (ast.Name, ast.Attribute)):
        return None
    text, after = ctx.text(target), (parent.end_lineno or parent.lineno, parent.end_col_offset or 0)
    found = [
        _position(node)
        for node in walk(scope)
        if isinstance(node, (ast.Name, ast.Attribute))
        and isinstance(node.ctx, ast.Load)
        and _position(node) >= after
        and ctx.text(node) == text
        and ctx.scope_of(node) is scope
        and _is_none_check(ctx, node, ctx.parents.get(node))
    ]
    return min(found) if found else None


class _Checked:
    """The type of ``_CHECKED``: a use that is a None check."""


_CHECKED = _Checked()


def _use_of_name(ctx: LintContext, target: ast.Name, stmt: ast.stmt) -> Union[ast.expr, _Checked, None]:
    """The first later use of ``target`` in its scope: ``_CHECKED`` when it is a None check
    (``x is None``, ``if x:``, ``x or y``), the using expression when it is a tensor use, None
    when neither (passed on, returned)."""
    scope = ctx.scope_of(stmt)
    after = (stmt.end_lineno, stmt.end_col_offset)
    names = []
    for node in walk(scope if scope is not ctx.tree else ctx.tree):
        if (
            isinstance(node, ast.Name)
            and node.id == target.id
            and isinstance(node.ctx, ast.Load)
            and (node.lineno, node.col_offset) >= after
            and ctx.scope_of(node) is scope
        ):
            names.append(node)
    copies_checked: List[Tuple[int, int]] = []
    for name in sorted(names, key=lambda n: (n.lineno, n.col_offset)):
        parent = ctx.parents.get(name)
        if _is_none_check(ctx, name, parent):
            return _CHECKED
        if _tensor_use(ctx, name, parent) and isinstance(parent, ast.expr):
            # ``best = mask``, ``if best is None: return``, then ``mask.sum()``: checked through the copy.
            return _CHECKED if any(at < _position(name) for at in copies_checked) else _widen(ctx, parent)
        # Copied elsewhere (``self.best_loss = loss``): the name still holds the value, read on.
        at = _copy_checked(ctx, name, parent, scope)
        if at is not None:
            copies_checked.append(at)
    return None


def _widen(ctx: LintContext, use: ast.expr) -> ast.expr:
    """``emb.unsqueeze`` -> ``emb.unsqueeze(0)`` for the message."""
    parent = ctx.parents.get(use)
    if isinstance(use, ast.Attribute) and isinstance(parent, ast.Call) and parent.func is use:
        return parent
    if isinstance(use, (ast.List, ast.Tuple)) and isinstance(parent, ast.Call) and use in parent.args:
        return parent  # ``[emb, x]`` -> ``torch.cat([emb, x])``
    return use


def _declares_none(ctx: LintContext, func: Function) -> bool:
    """``-> Optional[Tensor]`` / ``-> Tensor | None``: the author says None is a valid result."""
    if func.returns is None:
        return False
    text = ctx.text(func.returns)
    return "Optional" in text or "None" in text


def _uses_torch(ctx: LintContext) -> bool:
    return any(v == "torch" or v.startswith("torch.") for v in ctx.imports.aliases.values())


def _is_stub(func: Function) -> bool:
    """``...``, ``pass``, docstring-only or ``raise NotImplementedError`` bodies."""
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return not body or all(isinstance(s, (ast.Pass, ast.Raise)) for s in body)


def _name_span(ctx: LintContext, func: Function) -> Span:
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
