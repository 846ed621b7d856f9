"""Shared helpers for the lint tests: lint a dedented snippet, list (rule, line) pairs,
apply a finding's fix."""

from __future__ import annotations

import textwrap
from typing import List, Optional, Tuple

from torchdoctor.lint import Finding, lint_source
from torchdoctor.lint.fixes import apply_edits


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
