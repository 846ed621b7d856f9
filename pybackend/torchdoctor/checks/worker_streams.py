"""Bounded reading of what a worker writes (backend side, stdlib only).

``StreamReader.readline`` with a limit raises on a longer line and ends the ``async for``: one
33 MiB print killed the stderr reader, and the worker then blocked forever on a full pipe. Here
streams are read in chunks and split into lines by hand; a line over its limit is cut (the rest
is counted, not kept), so a reader never stops before end of file and memory stays bounded.

``LogBudget`` bounds what reaches the editor's log: the first ``budget`` bytes of the worker's
output are forwarded line by line, the rest is counted, and ``close()`` says how much was dropped.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Optional

CHUNK = 64 * 1024
STDERR_LINE = 16 * 1024  # characters of one stderr line kept for the log and the tail
LOG_BUDGET = 512 * 1024  # bytes of worker output forwarded to the log per run

LineCallback = Callable[[bytes, int], None]  # (the line, kept part; bytes cut from it)


async def read_lines(stream: asyncio.StreamReader, on_line: LineCallback, max_line: int) -> None:
    """Call ``on_line`` for every line of ``stream`` until end of file; lines over ``max_line`` are cut."""
    buf = bytearray()
    cut = 0
    while True:
        chunk = await stream.read(CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = max(0, max_line - len(buf))
            buf += piece[:room]
            cut += len(piece) - min(room, len(piece))
            if end < 0:
                break
            on_line(bytes(buf), cut)
            buf.clear()
            cut = 0
            start = end + 1
    if buf or cut:
        on_line(bytes(buf), cut)


def cut_note(cut: int) -> str:
    return f" … ({cut} more bytes of this line cut)" if cut else ""


class LogBudget:
    """Forward lines to ``sink`` until ``budget`` bytes have gone; count the rest."""

    def __init__(self, sink: Optional[Callable[[str], None]], budget: int = LOG_BUDGET) -> None:
        self._sink = sink
        self._left = budget
        self.dropped_bytes = 0
        self.dropped_lines = 0

    def __call__(self, line: str) -> None:
        if self._sink is None:
            return
        size = len(line) + 1
        if size <= self._left:
            self._left -= size
            self._sink(line)
            return
        self._left = 0
        self.dropped_bytes += size
        self.dropped_lines += 1

    def close(self) -> None:
        if self._sink is not None and self.dropped_bytes:
            self._sink(
                f"… {self.dropped_bytes} more bytes ({self.dropped_lines} lines) of the worker's output dropped "
                "from this log; the last lines are in the result's detail"
            )
            self.dropped_bytes = self.dropped_lines = 0
