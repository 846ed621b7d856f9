"""Fault-injection helpers: commands that run under a memory limit (see tests/python/faults/conftest.py)."""

from __future__ import annotations

import sys

FAULT_MEMORY_LIMIT = 4 * 1024**3  # bytes per process: torch on CPU needs < 1 GiB

# The limit the check worker itself would use (worker_guard.limit_kind): RLIMIT_DATA on Linux
# >= 4.7, so the suite also runs where CUDA is (RLIMIT_AS breaks a CUDA context, and a CUDA build
# of torch maps gigabytes of libraries); there the hard limit is lowered too, or the worker's own
# default (three quarters of the RAM) would raise the soft one past ours. No single quotes
# inside: conftest.py puts this text in a shell script between single quotes.
LAUNCHER = """\
import os, resource, sys
from torchdoctor.checks.worker_guard import limit_kind, nvidia_present
limit = int(sys.argv[1])
kind = limit_kind(sys.platform, os.uname().release, nvidia_present())
if kind:
    which = getattr(resource, kind)
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(which, (limit, limit if kind == "RLIMIT_DATA" else hard))
os.execv(sys.argv[2], sys.argv[2:])
"""


def limited_command(*argv: str, limit: int = FAULT_MEMORY_LIMIT) -> list[str]:
    """``argv`` (argv[0] an executable path) run under the memory limit."""
    return [sys.executable, "-c", LAUNCHER, str(limit), *argv]


def server_command() -> list[str]:
    return limited_command(sys.executable, "-m", "torchdoctor.server", "--stdio")
