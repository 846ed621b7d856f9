"""Fault injection under a memory limit: no test here can take the machine down.

Every process these tests start (the backend, and through it the check workers; the CLI) runs
under ``limited_command``: a small launcher that lowers the limit the check worker uses itself
(``RLIMIT_DATA`` on Linux >= 4.7, soft and hard; ``RLIMIT_AS`` elsewhere without an NVIDIA device:
``worker_guard.limit_kind``) with ``resource.setrlimit`` and then ``exec``s the real command, so
the limit holds for it and everything it spawns. A fault
that escapes our own bounds (a document read without a size limit, a batch of 10**9) then ends in a
``MemoryError`` in that process, not in the machine's OOM killer. The pytest process itself is not
limited: the rest of the suite shares it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from support.faults import FAULT_MEMORY_LIMIT, LAUNCHER


@pytest.fixture(scope="session")
def limited_python(tmp_path_factory) -> str:
    """An interpreter path (for torchDoctor.python / --python) that runs under the memory limit."""
    if not hasattr(os, "execv") or sys.platform == "win32":
        pytest.skip("the launcher needs POSIX exec")
    path: Path = tmp_path_factory.mktemp("limited") / "python"
    path.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c \'{LAUNCHER}\' {FAULT_MEMORY_LIMIT} "{sys.executable}" "$@"\n'
    )
    path.chmod(0o755)
    return str(path)
