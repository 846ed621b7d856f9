"""The rule registry: every rule's id, default severity, explanation and check function.

Rule modules register with the ``rule`` decorator at import time; ``all_rules()`` imports
the rule package once and returns them in id order. The explanation text here is what a
hover shows; ``docs/rules.md`` holds the long form with examples (a test keeps the two
in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from .context import LintContext
from .model import Finding, Fix, Span

DOCS_PATH = "docs/rules.md"


class Reporter:
    """Collects the findings of one rule run; rules call ``report``."""

    def __init__(self, rule: "Rule", ctx: LintContext) -> None:
        self.rule = rule
        self.ctx = ctx
        self.findings: List[Finding] = []

    def report(self, where, message: str, fix: Optional[Fix] = None, severity: Optional[str] = None) -> None:
        """Report at ``where``: an AST node or a ``Span``."""
        span = where if isinstance(where, Span) else self.ctx.source.span(where)
        self.findings.append(Finding(self.rule.id, severity or self.rule.severity, message, span, fix))


Check = Callable[[LintContext, Reporter], None]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str  # kebab-case slug, also the docs anchor suffix
    title: str  # one line, shown first in hovers and docs
    severity: str
    explanation: str  # markdown: why this trains silently wrong, and what to do
    check: Check

    @property
    def anchor(self) -> str:
        """The heading anchor of this rule in docs/rules.md (GitHub-style slug)."""
        return f"{self.id.lower()}-{self.name}"


_RULES: Dict[str, Rule] = {}


def rule(id: str, name: str, title: str, severity: str, explanation: str) -> Callable[[Check], Check]:
    """Register ``check`` as rule ``id``."""

    def register(check: Check) -> Check:
        if id in _RULES and _RULES[id].check is not check:
            raise ValueError(f"rule {id} registered twice")
        _RULES[id] = Rule(id, name, title, severity, explanation.strip(), check)
        return check

    return register


def all_rules() -> List[Rule]:
    from . import rules  # noqa: F401 - importing registers every rule

    return [_RULES[k] for k in sorted(_RULES)]


def get_rule(rule_id: str) -> Optional[Rule]:
    all_rules()
    return _RULES.get(rule_id)
