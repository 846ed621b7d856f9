"""A rank's lines reach a shared stderr whole, with its prefix, even when output is unbuffered.

Unbuffered (torchrun starts every rank with ``python -u``; ``PYTHONUNBUFFERED=1`` does the same),
``print`` writes the text and its newline apart, and two ranks on one pipe ran their lines together (a CI run saw rank 0's
"stopped" line carry rank 1's "distributed" text). ``ranks.say`` writes each call in one write.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

from support.paths import PYBACKEND
from torchdoctor.distributed import ranks

WRITER = """
import sys
sys.path.insert(0, {backend!r})
from torchdoctor.distributed import ranks
tag = sys.argv[1]
for i in range(400):
    ranks.{call}(tag * 300 + " line " + str(i) + "\\n" + tag + " second " + str(i))
"""


class _Writes(io.StringIO):
    """A real text stream that also keeps each ``write`` call's text."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


def test_each_line_gets_the_rank_prefix_in_one_write(monkeypatch) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    stream = _Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    ranks.say("[torchdoctor] anomaly: NaN\n  at model.0")
    assert stream.calls == ["[rank1]: [torchdoctor] anomaly: NaN\n[rank1]:   at model.0\n"]


def test_outside_a_job_the_lines_are_unprefixed(monkeypatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    stream = _Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    ranks.say("[torchdoctor] stopped: x")
    assert stream.getvalue() == "[torchdoctor] stopped: x\n"


def _two_ranks_on_one_pipe(call: str) -> list:
    """Two unbuffered processes (ranks 0 and 1 of 2) writing 800 lines each to one stderr pipe."""
    script = WRITER.format(backend=str(PYBACKEND), call=call)
    read_end, write_end = os.pipe()
    procs = []
    for rank in ("0", "1"):
        env = dict(os.environ, PYTHONUNBUFFERED="1", RANK=rank, WORLD_SIZE="2")
        procs.append(subprocess.Popen([sys.executable, "-c", script, "ab"[int(rank)]], stderr=write_end, env=env))
    os.close(write_end)
    with os.fdopen(read_end, "r") as pipe:
        text = pipe.read()
    assert all(p.wait(timeout=120) == 0 for p in procs), text[-2000:]
    return text.splitlines()


def _whole(line: str) -> bool:
    """A line of one rank only: its prefix once, and only its own letter in the text."""
    for rank, tag in (("0", "a"), ("1", "b")):
        other = "b" if tag == "a" else "a"
        if line.startswith(f"[rank{rank}]: ") and line.count("[rank") == 1 and other * 300 not in line:
            return line.endswith(tuple("0123456789")) and (f"{tag} second" in line or tag * 300 in line)
    return False


def test_two_unbuffered_ranks_never_run_their_lines_together() -> None:
    lines = _two_ranks_on_one_pipe("say")
    assert len(lines) == 1600
    assert all(_whole(line) for line in lines), [line[:80] for line in lines if not _whole(line)][:5]
