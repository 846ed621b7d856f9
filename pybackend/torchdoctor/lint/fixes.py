"""Building blocks for quick fixes: insert a line after a statement, add a keyword argument,
replace an expression. Each returns None when the edit would not be obviously safe (the
statement shares its line with another, the call ends oddly), and the rule then reports
without a fix."""

from __future__ import annotations

import ast
from typing import Optional

from .model import Fix, Span, TextEdit
from .source import Located, SourceText


def insert_line_after(source: SourceText, stmt: ast.stmt, code: str, title: str) -> Optional[Fix]:
    """Insert ``code`` on a new line after ``stmt``, at ``stmt``'s indentation."""
    if not source.alone_on_lines(stmt):
        return None
    end_line = (stmt.end_lineno or stmt.lineno) - 1
    end_col = len(source.line(end_line))
    indent = source.indent_of(stmt.lineno)
    return Fix(title, (TextEdit(Span(end_line, end_col, end_line, end_col), source.newline + indent + code),))


def add_keyword(source: SourceText, call: ast.Call, text: str, title: str) -> Optional[Fix]:
    """Append the argument ``text`` (``name=value``) to ``call``'s argument list."""
    close = source.span(call)
    before = source.segment(call)
    if not before.endswith(")"):
        return None
    func_len = len(source.segment(call.func))
    if not func_len or "(" not in before[func_len:]:
        return None
    inner = before[before.index("(", func_len) + 1 : -1]
    stripped = inner.rstrip()
    new_text = _appended(stripped, text)
    # Insert right after the last argument, before any trailing whitespace or newline.
    at = _position_after(close, before, len(before) - 1 - (len(inner) - len(stripped)))
    return Fix(title, (TextEdit(Span(at[0], at[1], at[0], at[1]), new_text),))


def add_dict_entry(source: SourceText, display: ast.Dict, key: str, value: str, title: str) -> Optional[Fix]:
    """Append ``'key': value`` to the dict display ``display`` (quoted like its first key)."""
    text = source.segment(display)
    if not (text.startswith("{") and text.endswith("}")):
        return None
    quote = "'"
    first = next((k for k in display.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)), None)
    if first is not None and source.segment(first)[:1] in ("'", '"'):
        quote = source.segment(first)[0]
    entry = f"{quote}{key}{quote}: {value}"
    inner = text[1:-1]
    stripped = inner.rstrip()
    new_text = _appended(stripped, entry)
    span = source.span(display)
    at = _position_after(span, text, 1 + len(stripped))
    return Fix(title, (TextEdit(Span(at[0], at[1], at[0], at[1]), new_text),))


def replace_node(source: SourceText, node: Located, new_text: str, title: str) -> Fix:
    return Fix(title, (TextEdit(source.span(node), new_text),))


def _appended(existing: str, item: str) -> str:
    """What to insert after ``existing`` (a list's items so far, right-stripped) to add ``item``."""
    if not existing:
        return item
    return (" " if existing.endswith(",") else ", ") + item


def _position_after(span: Span, text: str, index: int):
    """The (line, col) of character ``index`` of ``text``, which starts at ``span``'s start."""
    head = text[:index]
    line = span.start_line + head.count("\n")
    if "\n" in head:
        col = len(head) - head.rindex("\n") - 1
    else:
        col = span.start_col + len(head)
    return line, col


def apply_edits(text: str, edits) -> str:
    """Apply non-overlapping ``TextEdit``s to ``text`` (positions in code points), as an editor
    would; used by tests and by anyone applying fixes outside an editor."""
    from .source import split_lines

    lines = split_lines(text)
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    # Line breaks are normalised to "\n" for offset arithmetic; keep the text's own.
    flat = "\n".join(lines)

    def offset(line: int, col: int) -> int:
        if line >= len(lines):
            return len(flat)
        return offsets[line] + min(col, len(lines[line]))

    for edit in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        start = offset(edit.span.start_line, edit.span.start_col)
        end = offset(edit.span.end_line, edit.span.end_col)
        flat = flat[:start] + edit.new_text + flat[end:]
    return flat
