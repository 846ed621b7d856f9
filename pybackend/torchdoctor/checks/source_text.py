"""Reading a Python file's text the way Python itself does, within a size limit (stdlib only).

Python honours a UTF-8 byte-order mark and a PEP 263 coding cookie (``# -*- coding: latin-1 -*-``);
``open(path, encoding="utf-8")`` honours neither, so such files failed every check. Here the bytes
are decoded with ``importlib.util.decode_source`` (``tokenize.detect_encoding`` plus universal
newlines), after checking that the path is a regular file no bigger than ``MAX_SOURCE_BYTES``:
``file:///dev/zero`` or a FIFO named ``*.py`` must be a sentence, not an endless read.

Used by the server (documents not open in the editor), the worker (the file it imports) and the
CLI (finding the only class of a file). Every failure is a ``SourceError`` with a message a user
can act on.
"""

from __future__ import annotations

import importlib.util
import os
import stat

MAX_SOURCE_BYTES = 10 * 1024 * 1024  # far above any training script; below what stalls a parse


class SourceError(Exception):
    """The file cannot be read as Python source; ``message`` says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def too_large_message(size: int, limit: int = MAX_SOURCE_BYTES) -> str:
    return f"file too large for analysis ({size / 1e6:.1f} MB > {limit / 1e6:.0f} MB limit)"


def read_source(path: str, limit: int = MAX_SOURCE_BYTES) -> str:
    """The decoded text of the Python file at ``path``; raises ``SourceError``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except (OSError, ValueError) as exc:  # ValueError: a path with an embedded null byte
        raise SourceError(f"cannot read {path}: {_why(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(f"cannot read {path}: not a regular file")
        if info.st_size > limit:
            raise SourceError(f"{os.path.basename(path)}: {too_large_message(info.st_size, limit)}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {_why(exc)}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while we read it
        raise SourceError(f"{os.path.basename(path)}: {too_large_message(len(data), limit)}")
    return decode(data, path)


def decode(data: bytes, path: str) -> str:
    """Bytes to text with Python's rules (BOM, coding cookie); ``SourceError`` when they do not decode."""
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise SourceError(
            f"cannot read {path} as Python source: {exc}. Save it as UTF-8 or fix its coding line."
        ) from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return "the path contains a null byte"
    return getattr(exc, "strerror", None) or str(exc)
