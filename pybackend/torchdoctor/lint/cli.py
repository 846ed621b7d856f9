"""``torchdoctor lint PATH... [--format text|json] [--disable TD001,...]``.

Directories are searched recursively for ``*.py`` (skipping hidden directories such as
``.venv`` and ``.git``, ``__pycache__`` and ``node_modules``, and anything that is not a regular
file: a FIFO named ``x.py`` blocked the command forever). A named file that is not regular, or is
over ``MAX_FILE_BYTES``, is reported as unreadable. Exit status: 0 when nothing is
found, 1 when there are findings (a file that does not parse or cannot be read counts as one),
2 on usage errors (a path that does not exist, an unknown rule id).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tokenize
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from .. import __version__, background
from .engine import lint_source
from .model import ERROR, SYNTAX_ERROR_ID, Finding, Span
from .registry import all_rules

_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
# Python 3.9/3.10 only (background.parser_crashes); 3.11+ says "maximum recursion depth exceeded".
NESTED_TOO_DEEPLY = f"cannot parse: {background.NESTED_TOO_DEEPLY}"
MAX_FILE_BYTES = 10 * 1024 * 1024  # the language server's limit too (checks/source_text.py)


def add_lint(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lint",
        help="find training bugs that never crash in Python files (exit 1 when any)",
        description="Static checks for PyTorch training code: missing zero_grad, softmax before "
        "CrossEntropyLoss, leakage, and more (see docs/rules.md).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories (searched for *.py)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="IDS",
        help="comma-separated rule ids to skip, e.g. TD015,TD017 (repeatable)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    disabled, unknown = _parse_disabled(args.disable)
    if unknown:
        print(f"torchdoctor lint: unknown rule id(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        for path in missing:
            print(f"torchdoctor lint: no such file or directory: {path}", file=sys.stderr)
        return 2
    results = [(str(path), _lint_file(path, disabled)) for path in _python_files(args.paths)]
    text = json.dumps(_as_json(results), indent=2) if args.format == "json" else _as_text(results)
    _write(text)
    return 1 if any(findings for _, findings in results) else 0


def _write(text: str) -> None:
    """Print ``text``; a reader that stops early (``torchdoctor lint . | head``) is not an error.

    Python would print a ``BrokenPipeError`` traceback, and a second one when it flushes
    stdout at exit; point stdout at /dev/null so that final flush has nowhere to fail."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's capture)
            pass


def _parse_disabled(values: Sequence[str]) -> Tuple[List[str], List[str]]:
    known = {r.id for r in all_rules()}
    ids = [part.strip().upper() for value in values for part in value.split(",") if part.strip()]
    return ids, [i for i in ids if i not in known]


def _python_files(paths: Sequence[str]) -> Iterator[Path]:
    """Each named file, and every ``*.py`` under each named directory, in a stable order."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
                for name in sorted(files):
                    if name.endswith(".py") and (Path(root) / name).is_file():  # regular files only
                        yield Path(root) / name
        else:
            yield path


def _lint_file(path: Path, disabled: Sequence[str]) -> List[Finding]:
    text, problem = _read(path)
    if problem is not None:
        return [Finding(SYNTAX_ERROR_ID, ERROR, problem, Span(0, 0, 0, 0))]
    if background.parser_crashes(text):
        return [Finding(SYNTAX_ERROR_ID, ERROR, f"syntax error: {NESTED_TOO_DEEPLY}", Span(0, 0, 0, 0))]
    result = lint_source(text, str(path), disabled)
    for problem in result.internal_errors:  # a rule bug: say so, but keep the other rules' results
        print(f"torchdoctor lint: internal error on {path}: {problem}", file=sys.stderr)
    return result.all


def _read(path: Path) -> Tuple[str, Optional[str]]:
    """The file's text, honouring a PEP 263 encoding cookie; or why it cannot be read."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return "", "cannot read file: not a regular file"
        if info.st_size > MAX_FILE_BYTES:
            return (
                "",
                f"file too large for analysis ({info.st_size / 1e6:.1f} MB > {MAX_FILE_BYTES / 1e6:.0f} MB limit)",
            )
        with tokenize.open(str(path)) as handle:
            return handle.read(), None
    except (OSError, UnicodeDecodeError, SyntaxError, LookupError, ValueError) as exc:
        return "", f"cannot read file: {exc}"


def _as_text(results) -> str:
    lines = []
    count = fixable = 0
    for path, findings in results:
        for f in findings:
            count += 1
            fixable += f.fix is not None
            message = " ".join(f.message.split())  # one line per finding, whatever the message quotes
            lines.append(f"{path}:{f.line}:{f.span.start_col + 1}: {f.rule_id} {f.severity}: {message}")
    files = len(results)
    if count:
        fix_note = f", {fixable} with a quick fix in the editor" if fixable else ""
        lines.append(f"Found {count} problem{'s' * (count != 1)} in {files} file{'s' * (files != 1)}{fix_note}.")
    else:
        lines.append(f"No problems found in {files} file{'s' * (files != 1)}.")
    return "\n".join(lines)


def _as_json(results) -> dict:
    return {
        "version": __version__,
        "files": [
            {"path": path, "findings": [f.to_json() for f in findings]} for path, findings in results if findings
        ],
        "summary": {"files": len(results), "findings": sum(len(f) for _, f in results)},
    }
