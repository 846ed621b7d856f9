"""Lint a large document in a process of its own, so the language server keeps answering.

The server lints in a worker thread, but Python runs one thread at a time: while a 30,000-line
file is parsed (``ast.parse`` never lets go of the interpreter) and analysed, a hover or a
CodeLens on a small file waits for it (``bench/bench_lsp_responsiveness.py``). Above
``LARGE_DOCUMENT`` the lint runs in one long-lived child process instead (started with
``spawn``: it shares nothing with the server's threads), and the server's event loop only
waits on a pipe.

The child has its own project index: the editor's unsaved texts of the other open files are
sent along with each lint (only those that changed are re-read there). If the child cannot be
started or dies, the lint runs in the caller's thread as before, and the next large lint
starts a new child.
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import os
import threading
from typing import Dict, Iterable, Optional, Tuple

from .engine import lint_source
from .model import LintResult

log = logging.getLogger(__name__)

LARGE_DOCUMENT = 256 * 1024  # characters (~8,000 lines): the lint is felt by other requests

_lock = threading.Lock()
_pool: Optional[concurrent.futures.ProcessPoolExecutor] = None


def submit(
    text: str, path: Optional[str], disabled: Iterable[str], texts: Dict[str, str]
) -> "concurrent.futures.Future[LintResult]":
    """Start linting ``text`` in the child process; ``texts``: unsaved texts of other files."""
    return _executor().submit(_lint_in_child, text, path, tuple(disabled), dict(texts))


def lint(text: str, path: Optional[str], disabled: Iterable[str], texts: Dict[str, str]) -> LintResult:
    """``lint_source`` in the child process, or here when the child is unavailable."""
    try:
        return submit(text, path, disabled, texts).result()
    except (concurrent.futures.process.BrokenProcessPool, OSError, RuntimeError) as exc:
        log.warning("background lint unavailable (%r); linting in the server process", exc)
        reset()
        return lint_source(text, path, disabled)


def reset() -> None:
    """Forget the child (after it died); the next large lint starts a new one."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def _executor() -> concurrent.futures.ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        return _pool


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
