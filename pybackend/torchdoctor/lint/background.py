"""Lint a large document in a process of its own, so the language server keeps answering.

Above ``LARGE_DOCUMENT`` the server's lint runs in the lint's ``Child`` (``torchdoctor/background.py``:
one long-lived ``spawn``ed process; ``ast.parse`` in a thread would hold the interpreter, and a
hover or a CodeLens on a small file would wait for it, ``bench/bench_lsp_responsiveness.py``).

The child has its own project index: the editor's unsaved texts of the other open files are
sent along with each lint (only those that changed are re-read there). If the child cannot be
started or dies, the lint runs in the caller's thread as before, and the next large lint
starts a new child.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
from typing import Dict, Iterable, Optional, Tuple

from ..background import LARGE_DOCUMENT, Child, ChildStopped, ChildUnavailable
from .engine import lint_source
from .model import LintResult

__all__ = ["CHILD", "LARGE_DOCUMENT", "lint", "reset", "submit"]

log = logging.getLogger(__name__)

CHILD = Child("lint")


def submit(
    text: str, path: Optional[str], disabled: Iterable[str], texts: Dict[str, str]
) -> "concurrent.futures.Future[LintResult]":
    """Start linting ``text`` in the child process; ``texts``: unsaved texts of other files."""
    return CHILD.submit(_lint_in_child, text, path, tuple(disabled), dict(texts))


def lint(text: str, path: Optional[str], disabled: Iterable[str], texts: Dict[str, str]) -> LintResult:
    """``lint_source`` in the child process, or here when the child is unavailable."""
    try:
        return CHILD.call(_lint_in_child, text, path, tuple(disabled), dict(texts))
    except (ChildStopped, ChildUnavailable) as exc:
        log.warning("background lint unavailable (%s); linting in the server process", exc)
        return lint_source(text, path, disabled)


def reset() -> None:
    """Forget the child (after it died); the next large lint starts a new one."""
    CHILD.reset()


def _lint_in_child(text: str, path: Optional[str], disabled: Tuple[str, ...], texts: Dict[str, str]) -> LintResult:
    """Runs in the child: bring its project index up to the editor's texts, then lint."""
    from . import project

    index = project.PROJECT
    wanted = {os.path.abspath(p): t for p, t in texts.items()}
    for known in [p for p in index.unsaved_paths() if p not in wanted]:
        index.set_text(known, None)  # closed in the editor since the last lint
    for key, value in wanted.items():
        if index.unsaved_text(key) != value:
            index.set_text(key, value)
    return lint_source(text, path, disabled)
