"""Shared pieces for the anomaly tests: a watch for the length of a ``with``, small training loops.

A plain module (not a conftest), imported as ``from support.anomaly import ...``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import torch
from torch import nn

from torchdoctor.runtime.anomaly import watch as anomaly_watch
from torchdoctor.runtime.anomaly.config import from_mapping

REPO = Path(__file__).resolve().parents[3]
PYBACKEND = REPO / "pybackend"
SAMPLES = REPO / "sample_workspace"
BROKEN = SAMPLES / "broken"


class Watched:
    """What a ``watching()`` block saw: reports, and the ones that asked to break."""

    def __init__(self) -> None:
        self.breaks: List[Dict[str, Any]] = []
        self.watch: Optional[anomaly_watch.Watch] = None

    @property
    def reports(self) -> List[Dict[str, Any]]:
        return anomaly_watch.reports()

    @property
    def kinds(self) -> List[str]:
        return [r["kind"] for r in self.reports]


@contextlib.contextmanager
def watching(deferred: Optional[bool] = None, **settings: Any) -> Iterator[Watched]:
    """Install the watch with these settings (the JSON schema's keys); remove it after."""
    seen = Watched()
    anomaly_watch.clear_reports()
    seen.watch = anomaly_watch.install(from_mapping(settings), on_break=seen.breaks.append, deferred=deferred)
    try:
        yield seen
    finally:
        anomaly_watch.uninstall()


class MLP(nn.Module):
    def __init__(self, features: int = 10, hidden: int = 16, classes: int = 2) -> None:
        super().__init__()
        self.fc1, self.act = nn.Linear(features, hidden), nn.ReLU()
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))  # forward line


def data(n: int = 32, features: int = 10, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    return x, (x[:, 0] > 0).long()


def train(model: nn.Module, x, y, steps: int = 5, lr: float = 1e-2, zero_grad: bool = True) -> List[float]:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        if zero_grad:
            optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # backward line
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m torchdoctor ARGS`` as a user runs it (one torch thread: the CI box has two cores)."""
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=str(SAMPLES),
    )
