"""Shared helpers for the checks tests: sample paths, writing a model file, building an example."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "sample_workspace" / "models"
PYTHON = sys.executable


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# An RNN that keeps its hidden state on the module between calls without detaching it: the second
# backward goes through the graph the first one freed (the LR finder and overfit tests use it).
CARRIED_STATE_MODEL = """
import torch
import torch.nn as nn

class Carry(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 6)
        self.head = nn.Linear(6, 3)
        self.h = None

    def forward(self, x):
        self.h = self.cell(x, self.h)  # carried over without .detach()
        return self.head(self.h)

def torchdoctor_example():
    return Carry(), (torch.randn(5, 4), torch.randint(0, 3, (5,)))
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(code(text))
    return path


def example(path: Path, class_name: str, options: dict | None = None, targets: bool = True):
    """The Example a worker would build (in this process: the tests import torch)."""
    from torchdoctor.checks import example as E

    options = options or {}
    module = E.load_user_module(str(path))
    ex = E.build(module, class_name, options)
    return E.complete(ex, options) if targets else ex


def new_result(check: str, class_name: str = "M") -> dict:
    from torchdoctor.checks import result as R

    return R.new_result(check, class_name, "f.py")


def quiet(fraction: float, message: str) -> None:
    """A progress callback that ignores progress."""


def no_torch_python(tmp_dir: Path) -> str:
    """An interpreter without torch: the system one when it lacks torch, else a fresh venv."""
    candidate = "/usr/bin/python3"
    if (
        os.path.exists(candidate)
        and subprocess.run([candidate, "-c", "import torch"], capture_output=True).returncode != 0
    ):
        return candidate
    venv = tmp_dir / "notorch"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")
