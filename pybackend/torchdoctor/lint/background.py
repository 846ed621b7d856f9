"""Lint a large document in a process of its own, so the language server keeps answering.

Above ``LARGE_DOCUMENT`` the server's lint runs in the lint's ``Child`` (``torchdoctor/background.py``:
one long-lived ``spawn``ed process; ``ast.parse`` in a thread would hold the interpreter, and a
hover or a CodeLens on a small file would wait for it, ``bench/bench_lsp_responsiveness.py``).

The child has its own project index: the editor's unsaved texts of the other open files are
sent along with each lint (only those that changed are re-read there). Only when no child can be
started does the lint run in the server's process. A child that stops on the text (a crash of the
parser, out of memory) or takes longer than its deadline (``background.DEADLINE_SECONDS``) is a
``LintResult`` with a ``note`` saying so, never a second try in the server: a text that brought
the child down would bring the server down. The next large lint starts a new child.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import os
from typing import Dict, Iterable, Optional, Tuple

from ..background import LARGE_DOCUMENT, Child, ChildStopped
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


async def lint(text: str, path: Optional[str], disabled: Iterable[str], texts: Dict[str, str]) -> LintResult:
    """``lint_source`` in the child process (in a thread here only when no child starts); a note
    when the child stops on this text or runs past its deadline."""
    disabled = tuple(disabled)
    try:
        return await CHILD.run(
            _lint_in_child, text, path, disabled, dict(texts), here=functools.partial(lint_source, text, path, disabled)
        )
    except ChildStopped as exc:  # ChildTimedOut too: its text says so
        log.warning("the lint of %s did not finish in its process: %s", path or "<text>", exc)
        return LintResult(note=str(exc))


def reset() -> None:
    """Kill the child; the next large lint starts a new one."""
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
