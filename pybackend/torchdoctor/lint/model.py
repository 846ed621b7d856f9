"""What a lint run produces: findings, their ranges, and the text edits that fix them.

Positions are 0-based lines and 0-based columns counted in code points (Python ``str``
indices), the same convention pygls uses internally; the LSP layer converts them to the
client's encoding and the CLI adds 1 for humans. Plain dataclasses keep the engine free of
any LSP dependency, so the CLI and the server share one model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

# Severities, ordered from loudest to quietest; the LSP maps them 1:1.
ERROR = "error"
WARNING = "warning"
INFORMATION = "information"
HINT = "hint"
SEVERITIES = (ERROR, WARNING, INFORMATION, HINT)

# Not a rule: the id a file that does not parse is reported under.
SYNTAX_ERROR_ID = "TD000"


@dataclass(frozen=True, order=True)
class Span:
    """A half-open range ``[start, end)`` in a source text."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        """Whether the position lies inside the span (end inclusive, as a cursor can sit there)."""
        if (line, col) < (self.start_line, self.start_col):
            return False
        return (line, col) <= (self.end_line, self.end_col)

    def to_json(self) -> dict:
        return {
            "start": {"line": self.start_line, "character": self.start_col},
            "end": {"line": self.end_line, "character": self.end_col},
        }


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` with ``new_text`` (an empty span inserts)."""

    span: Span
    new_text: str

    def to_json(self) -> dict:
        return {"range": self.span.to_json(), "newText": self.new_text}


@dataclass(frozen=True)
class Fix:
    """A safe, mechanical correction: applying every edit leaves the file fixed for this finding."""

    title: str
    edits: Tuple[TextEdit, ...]

    def to_json(self) -> dict:
        return {"title": self.title, "edits": [e.to_json() for e in self.edits]}


@dataclass(frozen=True)
class Finding:
    """One problem found in one file."""

    rule_id: str
    severity: str
    message: str
    span: Span
    fix: Optional[Fix] = None

    @property
    def line(self) -> int:
        """1-based line, as editors and tracebacks show it."""
        return self.span.start_line + 1

    def to_json(self) -> dict:
        data = {
            "id": self.rule_id,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
            "column": self.span.start_col + 1,
            "range": self.span.to_json(),
        }
        if self.fix is not None:
            data["fix"] = self.fix.to_json()
        return data


@dataclass
class LintResult:
    """Everything one lint of one source text produced."""

    findings: list = field(default_factory=list)
    # Set when the text does not parse: then ``findings`` holds only that report.
    syntax_error: Optional[Finding] = None
    # Rules that raised: logged and listed here, never shown to users as findings.
    internal_errors: list = field(default_factory=list)
    # Set when the text was not linted, and why (the server's lint process stopped on it).
    note: Optional[str] = None

    @property
    def all(self) -> list:
        """Findings plus the syntax-error report, the way the CLI counts them."""
        if self.syntax_error is not None:
            return [self.syntax_error]
        return list(self.findings)
