"""Run the rules over one source text: parse, analyse, filter, sort. Never raises.

A text that does not parse yields one ``TD000`` report instead of findings; a rule that
raises is logged and skipped, so one analysis bug cannot hide every other finding or take
the language server down.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import logging
import re
import sys
import warnings
from typing import Iterable, Optional, Tuple

from .context import LintContext
from .ignore import is_ignored, parse_ignores
from .model import ERROR, SYNTAX_ERROR_ID, Finding, LintResult, Span
from .registry import Reporter, all_rules
from .source import SourceText

log = logging.getLogger(__name__)


def lint_source(text: str, path: Optional[str] = None, disabled: Iterable[str] = ()) -> LintResult:
    """Lint ``text`` (the contents of ``path``, used only in messages) with every rule not in
    ``disabled``."""
    with _collector_paused():
        return _lint(text, path, disabled)


@contextlib.contextmanager
def _collector_paused():
    """Pause the cyclic garbage collector while linting.

    The AST of a long file is ~100k objects and the index adds as many; while they are being
    allocated the collector rescans them over and over, which doubled the time to lint a
    5,000-line file (see bench/bench_lint.py). Nothing here needs cycles collected promptly,
    and the collector resumes (and frees the run's cycles) as soon as the lint is over.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _lint(text: str, path: Optional[str], disabled: Iterable[str]) -> LintResult:
    tree = _parse(text, path)
    if isinstance(tree, Finding):
        return LintResult(syntax_error=tree)
    source = SourceText(text)
    ctx = LintContext(tree, source, path)
    try:
        result = _run_rules(ctx, text, path, disabled)
    finally:
        # The context, the tree and the rules' analyses refer to each other (a rule's shared
        # analysis holds the context): cut those cycles so reference counting frees the ~100k
        # objects of a long file now. Otherwise the collector, resumed, traverses them all
        # (90 ms of a 400 ms lint on the 5,000-line module of bench/bench_lint.py).
        ctx.release()
    return result


def _run_rules(ctx: LintContext, text: str, path: Optional[str], disabled: Iterable[str]) -> LintResult:
    skip = {r.upper() for r in disabled}
    result = LintResult()
    for rule in all_rules():
        if rule.id in skip:
            continue
        reporter = Reporter(rule, ctx)
        try:
            rule.check(ctx, reporter)
        except (Exception, RecursionError) as exc:  # noqa: BLE001 - one rule must not sink the rest
            log.warning("rule %s failed on %s: %r", rule.id, path or "<text>", exc, exc_info=True)
            result.internal_errors.append(f"{rule.id}: {exc!r}")
            continue
        result.findings.extend(reporter.findings)
    ignores = parse_ignores(text)
    unique = {(f.rule_id, f.span): f for f in result.findings if not is_ignored(f, ignores)}
    result.findings = sorted(unique.values(), key=lambda f: (f.span, f.rule_id))
    return result


def _parse(text: str, path: Optional[str]):
    """The module's AST, or a ``TD000`` finding saying why there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are not our business
            return ast.parse(text, filename=path or "<unknown>")
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        newer = _newer_syntax(SourceText(text).line((exc.lineno or 1) - 1), msg)
        if newer is not None:
            (major, minor), what = newer
            here = sys.version_info
            msg += (
                f" (your interpreter is {here[0]}.{here[1]}; this file uses syntax from Python "
                f"{major}.{minor} or newer: {what})"
            )
        return _syntax_finding(text, msg, exc.lineno, exc.offset)
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: source with NUL bytes; RecursionError: absurdly nested expressions.
        return _syntax_finding(text, f"cannot parse: {exc}", 1, 1)


# Syntax an older interpreter rejects, recognised on the line its parser stops at:
# (first version that accepts it, pattern, what to call it).
_NEWER_SYNTAX = (
    ((3, 12), re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(\[.*\])?\s*="), "a `type` alias statement"),
    ((3, 12), re.compile(r"^\s*(async\s+)?def\s+\w+\s*\["), "a generic function `def f[T](...)`"),
    ((3, 12), re.compile(r"^\s*class\s+\w+\s*\["), "a generic class `class C[T]`"),
    ((3, 11), re.compile(r"^\s*except\s*\*"), "`except*`"),
    ((3, 10), re.compile(r"^\s*match\s+\S.*:\s*(#.*)?$"), "a `match` statement"),
)
_FSTRING = re.compile(r"(?<![\w\"'])[rRbB]?[fF][rR]?[\"']")


def _newer_syntax(line: str, msg: str) -> Optional[Tuple[Tuple[int, int], str]]:
    """When the parser of *this* interpreter fails on syntax a newer Python accepts, which
    version and construct: the user then knows to point the extension at that Python."""
    here = sys.version_info[:2]
    for version, pattern, what in _NEWER_SYNTAX:
        if here < version and pattern.search(line):
            return version, what
    if here < (3, 12) and _FSTRING.search(line) and (msg.startswith("f-string") or "line continuation" in msg):
        return (3, 12), "an f-string that reuses its quotes or holds a backslash (PEP 701)"
    return None


def _syntax_finding(text: str, msg: str, lineno: Optional[int], offset: Optional[int]) -> Finding:
    lines = SourceText(text).lines
    line = max(0, min((lineno or 1) - 1, len(lines) - 1))
    width = len(lines[line]) if lines else 0
    col = max(0, min((offset or 1) - 1, width))
    end = width if col >= width else col + 1
    return Finding(SYNTAX_ERROR_ID, ERROR, f"syntax error: {msg}", Span(line, col, line, end))
