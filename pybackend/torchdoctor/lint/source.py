"""The linted text: lines, node positions in code points, and the snippets rules quote.

``ast`` gives columns in UTF-8 bytes; editors count characters. Everything a rule reports
goes through ``SourceText.span`` so a line with an accent or an emoji still underlines the
right characters.
"""

from __future__ import annotations

import ast
import re
from typing import Any, List, Optional, Union

from .model import Span

# The nodes that carry a position (statements, expressions, handlers, arguments, keywords...):
# ``ast.AST`` itself has none, so every position helper takes one of these.
Located = Union[ast.stmt, ast.expr, ast.excepthandler, ast.arg, ast.keyword, ast.alias]

# The line breaks Python's tokenizer knows; ``str.splitlines`` also splits on form feeds
# and other characters that editors and ``ast`` keep inside a line.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> List[str]:
    """Lines without their terminators, numbered the way ``ast`` numbers them (from 0 here)."""
    return _LINE_BREAK.split(text)


class SourceText:
    """One source text with position helpers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)
        first_break = _LINE_BREAK.search(text)
        # Inserted lines use the file's own line ending, so a fix never mixes styles.
        self.newline = first_break.group(0) if first_break else "\n"

    def line(self, index: int) -> str:
        """Line ``index`` (0-based), or "" past the end."""
        if 0 <= index < len(self.lines):
            return self.lines[index]
        return ""

    def char_col(self, lineno: int, byte_col: int) -> int:
        """Convert an ``ast`` (1-based line, UTF-8 byte column) to a code-point column."""
        text = self.line(lineno - 1)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: Located, end: Optional[Located] = None) -> Span:
        """The span of ``node`` (through ``end`` when given)."""
        last = end if end is not None else node
        end_lineno = last.end_lineno or node.lineno
        end_byte = last.end_col_offset
        if end_byte is None:
            end_byte = node.col_offset
        return Span(
            node.lineno - 1,
            self.char_col(node.lineno, node.col_offset),
            end_lineno - 1,
            self.char_col(end_lineno, end_byte),
        )

    def first_line_span(self, node: Located) -> Span:
        """The span of ``node`` cut at the end of its first line (for long compound statements)."""
        full = self.span(node)
        if full.end_line == full.start_line:
            return full
        return Span(full.start_line, full.start_col, full.start_line, len(self.line(full.start_line).rstrip()))

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``, or "" when it cannot be recovered.

        Like ``ast.get_source_segment`` but without re-splitting the whole text per call,
        which would make rules quadratic on long files.
        """
        # Any node is accepted (a rule may quote a module or a comprehension clause): those
        # without a position quote as "". One attribute read each (rules quote 30k nodes of a
        # 32k-line script), not four ``getattr`` calls with defaults.
        located: Any = node
        try:
            lineno, col, end_lineno, end_byte = (
                located.lineno,
                located.col_offset,
                located.end_lineno,
                located.end_col_offset,
            )
        except AttributeError:
            return ""
        if end_lineno is None or end_byte is None or lineno is None or col is None:
            return ""
        first, last = lineno - 1, end_lineno - 1
        if first == last:
            line = self.lines[first] if 0 <= first < len(self.lines) else ""
            if line.isascii():  # bytes are characters: no encoding round trip (most lines)
                return line[col:end_byte]
            raw = line.encode("utf-8")[col:end_byte]
            return raw.decode("utf-8", errors="replace")
        parts = [self.line(first).encode("utf-8")[col:].decode("utf-8", errors="replace")]
        parts.extend(self.line(i) for i in range(first + 1, last))
        parts.append(self.line(last).encode("utf-8")[:end_byte].decode("utf-8", errors="replace"))
        return "\n".join(parts)

    def indent_of(self, lineno: int) -> str:
        """The leading whitespace of 1-based line ``lineno``."""
        text = self.line(lineno - 1)
        return text[: len(text) - len(text.lstrip())]

    def alone_on_lines(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt`` shares none of its lines with another statement (no ``;``, no
        ``if x: stmt``), so a new line can be inserted before or after it safely."""
        first = self.line(stmt.lineno - 1)
        before = first.encode("utf-8")[: stmt.col_offset].decode("utf-8", errors="replace")
        if before.strip():
            return False
        last = self.line((stmt.end_lineno or stmt.lineno) - 1)
        after = last.encode("utf-8")[stmt.end_col_offset or 0 :].decode("utf-8", errors="replace")
        after = after.strip()
        return not after or after.startswith("#")
