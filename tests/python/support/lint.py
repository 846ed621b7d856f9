"""Shared helpers for the lint tests: lint a dedented snippet, list (rule, line) pairs,
apply a finding's fix, lint the files of a small project, time one rule on a long script."""

from __future__ import annotations

import ast
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from torchdoctor.lint import Finding, get_rule, lint_source
from torchdoctor.lint import project as P
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.fixes import apply_edits
from torchdoctor.lint.model import LintResult
from torchdoctor.lint.registry import Reporter
from torchdoctor.lint.source import SourceText


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def findings(text: str, rule: Optional[str] = None, **kwargs) -> List[Finding]:
    result = lint_source(code(text), **kwargs)
    assert result.internal_errors == [], result.internal_errors
    return [f for f in result.all if rule is None or f.rule_id == rule]


def hits(text: str, rule: Optional[str] = None) -> List[Tuple[str, int]]:
    """(rule id, 1-based line) of each finding, optionally of one rule only."""
    return [(f.rule_id, f.line) for f in findings(text, rule)]


def fixed(text: str, rule: str) -> str:
    """The snippet after applying the fix of its (single) ``rule`` finding."""
    found = [f for f in findings(text, rule) if f.fix is not None]
    assert len(found) == 1, found
    return apply_edits(code(text), found[0].fix.edits)


def lint_files(root: Path, files: Dict[str, str], only: Optional[List[str]] = None) -> Dict[str, LintResult]:
    """Write ``files`` (name -> text, dedented) under ``root``, then lint each (or those named in
    ``only``) as the editor does, with a fresh project index: what a file imports is read from
    the others on disk."""
    for name, text in files.items():
        (root / name).write_text(code(text), encoding="utf-8")
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        return {
            name: lint_source((root / name).read_text(encoding="utf-8"), str(root / name))
            for name in (only or list(files))
        }
    finally:
        P.PROJECT = saved


def rule_cpu_time(rule_id: str, header: str, block: str, blocks: int, per_block: int = 1) -> float:
    """Best of three CPU times of ``rule_id`` alone (parse and index excluded) on ``header`` and
    ``blocks`` copies of ``block``; each copy must give ``per_block`` findings."""
    text = header + "".join(block.format(i=i) for i in range(blocks))
    rule = get_rule(rule_id)
    assert rule is not None
    best = float("inf")
    for _ in range(3):
        ctx = LintContext(ast.parse(text), SourceText(text))
        reporter = Reporter(rule, ctx)
        start = time.process_time()
        rule.check(ctx, reporter)
        best = min(best, time.process_time() - start)
        assert len(reporter.findings) == blocks * per_block, reporter.findings[:3]
        ctx.release()
    return best


def assert_linear(rule_id: str, header: str, block: str, per_block: int = 1, small: int = 100) -> None:
    """4x the blocks must cost far less than the 16x of a rule that rescans the module per block."""
    seen = []
    for _trial in range(3):  # a load spike can break one trial; a quadratic rescan fails all three
        low = rule_cpu_time(rule_id, header, block, small, per_block)
        high = rule_cpu_time(rule_id, header, block, 4 * small, per_block)
        seen.append((low, high))
        if high < 9 * low:
            return
    raise AssertionError(f"{rule_id}: 4x the blocks cost {[round(h / lo, 1) for lo, h in seen]}x (linear ~4x)")
