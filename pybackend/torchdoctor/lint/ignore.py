"""``# torchdoctor: ignore[TD001]`` comments: reading them, and writing one for a quick action.

A comment silences the listed rules for findings that start or end on its line (a finding
spanning a multi-line call can be silenced at either end). ``# torchdoctor: ignore`` with no
list silences every rule on that line. Comments are read with ``tokenize`` so the same text
inside a string literal does not count.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, List, Optional

from .model import Finding, Span, TextEdit

ALL = "*"
_DIRECTIVE = re.compile(r"#\s*torchdoctor\s*:\s*ignore\b(?:\[(?P<ids>[^\]]*)\])?", re.IGNORECASE)
_ID = re.compile(r"TD\d{3}", re.IGNORECASE)

Ignores = Dict[int, FrozenSet[str]]  # 0-based line -> rule ids (or ALL)


def parse_ignores(text: str) -> Ignores:
    """Map each line carrying an ignore comment to the rule ids it silences."""
    if "torchdoctor" not in text.lower():
        return {}
    ignores: Ignores = {}
    for line, comment in _comments(text):
        ids = _ids_in(comment)
        if ids is not None:
            ignores[line] = ignores.get(line, frozenset()) | ids
    return ignores


def _ids_in(comment: str) -> Optional[FrozenSet[str]]:
    match = _DIRECTIVE.search(comment)
    if match is None:
        return None
    if match.group("ids") is None:
        return frozenset({ALL})
    return frozenset(i.upper() for i in _ID.findall(match.group("ids")))


def _comments(text: str):
    """(0-based line, comment text) for every comment; falls back to a line scan when the
    text does not tokenize (it then may also see ``#`` inside strings, which is harmless)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0] - 1, tok.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for index, line in enumerate(text.splitlines()):
            if "#" in line:
                yield index, line[line.index("#") :]


def is_ignored(finding: Finding, ignores: Ignores) -> bool:
    for line in {finding.span.start_line, finding.span.end_line}:
        ids = ignores.get(line)
        if ids and (ALL in ids or finding.rule_id in ids):
            return True
    return False


def ignore_edit(lines: List[str], line: int, rule_id: str) -> TextEdit:
    """The edit that adds ``rule_id`` to line ``line``'s ignore comment (creating it if needed).

    ``lines`` are the document's lines without terminators.
    """
    text = lines[line] if 0 <= line < len(lines) else ""
    match = _DIRECTIVE.search(text)
    if match is not None and match.group("ids") is not None:
        close = match.end() - 1  # the "]"
        existing = match.group("ids").strip()
        insert = f", {rule_id}" if existing else rule_id
        return TextEdit(Span(line, close, line, close), insert)
    end = len(text.rstrip())
    return TextEdit(Span(line, end, line, len(text)), f"  # torchdoctor: ignore[{rule_id}]")
