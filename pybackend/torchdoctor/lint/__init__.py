"""Static analysis of PyTorch training code: the bugs that never crash, found in the source.

Pure ``ast``; never imports torch. Entry points:

- ``lint_source(text, path=None, disabled=())`` -> ``LintResult`` (never raises);
- ``all_rules()`` / ``get_rule(id)``: the registry, with each rule's explanation;
- ``torchdoctor lint PATH...`` on the command line (``lint.cli``).
"""

from __future__ import annotations

from .engine import lint_source
from .model import ERROR, HINT, INFORMATION, SYNTAX_ERROR_ID, WARNING, Finding, Fix, LintResult, Span, TextEdit
from .registry import Rule, all_rules, get_rule

__all__ = [
    "ERROR",
    "HINT",
    "INFORMATION",
    "SYNTAX_ERROR_ID",
    "WARNING",
    "Finding",
    "Fix",
    "LintResult",
    "Rule",
    "Span",
    "TextEdit",
    "all_rules",
    "get_rule",
    "lint_source",
]
