"""Fault-injection helpers: commands that run under a memory limit (see tests/python/faults/conftest.py)."""

from __future__ import annotations

import sys

FAULT_MEMORY_LIMIT = 4 * 1024**3  # bytes of address space per process: torch on CPU needs < 1 GiB

LAUNCHER = """\
import os, resource, sys
limit = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
if hard != resource.RLIM_INFINITY:
    limit = min(limit, hard)
resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
os.execv(sys.argv[2], sys.argv[2:])
"""


def limited_command(*argv: str, limit: int = FAULT_MEMORY_LIMIT) -> list[str]:
    """``argv`` (argv[0] an executable path) run under the memory limit."""
    return [sys.executable, "-c", LAUNCHER, str(limit), *argv]


def server_command() -> list[str]:
    return limited_command(sys.executable, "-m", "torchdoctor.server", "--stdio")
