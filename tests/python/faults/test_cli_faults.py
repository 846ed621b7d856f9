"""The ``torchdoctor`` command on bad input: a sentence and exit status 2 (or a finding), never a
traceback and never a hang. Each command runs as a subprocess under the suite's memory limit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.faults import limited_command

# 300,000 levels: past the depth that crashes the parser of Python 3.9 and 3.10 (~120,000; 100,000
# parsed there, and the lint rightly found nothing), where 3.11+ raise RecursionError.
DEEP = "x = " + "+".join(["a"] * 300_000) + "\n"


def torchdoctor(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        limited_command(sys.executable, "-m", "torchdoctor", *args),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    "text, says",
    [
        (DEEP, "nested too deeply"),
        ("x = 1\x00\n", "null bytes"),
        ("class A(:\n", "syntax error at line 1"),
        ("import torch.nn as nn\nx = 1\n", "nn.Module classes in the file: none"),
    ],
    ids=["300k-term sum", "null byte", "syntax error", "no class"],
)
def test_check_without_a_class_name_exits_2_with_a_sentence(tmp_path: Path, text: str, says: str):
    path = tmp_path / "model.py"
    path.write_text(text)
    done = torchdoctor("check", "shapes", str(path))
    assert done.returncode == 2, done.stderr[-2000:]
    assert says in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("timeout", ["0", "-5", "nan", "inf"])
def test_check_with_a_time_limit_that_is_not_positive_exits_2(timeout: str):
    from support.checks import MODELS

    done = torchdoctor("check", "shapes", f"{MODELS / 'mlp.py'}::TinyMLP", "--timeout", timeout)
    assert done.returncode == 2 and "time limit" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_lint_of_a_folder_with_a_fifo_does_not_block(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "ok.py").write_text("x = 1\n")
    done = torchdoctor("lint", str(tmp_path), timeout=60)
    assert done.returncode == 0 and "No problems found in 1 file" in done.stdout, done.stdout + done.stderr
    named = torchdoctor("lint", str(tmp_path / "pipe.py"), timeout=60)
    assert named.returncode == 1 and "not a regular file" in named.stdout


def test_lint_of_a_file_that_defeats_the_parser_is_a_finding(tmp_path: Path):
    path = tmp_path / "deep.py"
    path.write_text(DEEP)
    done = torchdoctor("lint", str(path))
    assert done.returncode == 1 and "TD000" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
