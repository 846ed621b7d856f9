"""The rank and world size of this process, as torchrun sets them (``RANK``, ``WORLD_SIZE``)."""

from __future__ import annotations

import os
import sys
from typing import Mapping, Optional


def rank(environ: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """This process's global rank, or None outside a distributed job."""
    return _int((environ if environ is not None else os.environ).get("RANK"))


def world_size(environ: Optional[Mapping[str, str]] = None) -> int:
    value = _int((environ if environ is not None else os.environ).get("WORLD_SIZE"))
    return value if value is not None and value > 0 else 1


def prefix(environ: Optional[Mapping[str, str]] = None) -> str:
    """What a line of this rank starts with: ``[rank1]: `` as torchrun's own tracebacks do."""
    r = rank(environ)
    return f"[rank{r}]: " if r is not None and world_size(environ) > 1 else ""


def say(text: str) -> None:
    """Write ``text`` to stderr, each of its lines after this rank's prefix, in one write.

    ``print`` writes the text and its newline apart when Python's output is unbuffered, as in
    every rank (torchrun starts them with ``python -u``) or under ``PYTHONUNBUFFERED=1``: two ranks sharing one pipe
    then ran their lines together (``[rank0]: ...stopped: ...[rank1]: ...distributed: ...``). One
    write of a line under the pipe's 4 KiB atomic size is never split. The script's own prints
    go first (stdout flushed)."""
    head = prefix()
    sys.stdout.flush()
    sys.stderr.write("".join(head + line + "\n" for line in text.splitlines()))
    sys.stderr.flush()


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
