"""Shared pieces of the collection tests: the sample models and snapshots (the ``collector``
fixture is in unit/runtime/collect/conftest.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "sample_workspace"
if str(SAMPLES) not in sys.path:
    sys.path.insert(0, str(SAMPLES))

from torchdoctor.runtime.collect import snapshot  # noqa: E402


def snap(model=None, tmp_path=None) -> dict:
    """``snapshot.dump`` through a real file when ``tmp_path`` is given, else ``build``."""
    if tmp_path is None:
        return snapshot.build(model)
    path = tmp_path / "snapshot.json"
    status = snapshot.dump(str(path), model)
    data = json.loads(path.read_text())
    data["_status"] = status
    return data


def calls_by(s: dict, key: str = "path") -> dict:
    return {c[key]: c for c in s["calls"]}


def tiny_cnn(seed: int = 0):
    from models.cnn import TinyCNN

    torch.manual_seed(seed)
    return TinyCNN()


def train_steps(model, steps: int = 2, batch: int = 8, zero_grad_after: bool = False, set_to_none: bool = True):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (batch,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    crit = torch.nn.CrossEntropyLoss()
    loss = None
    for _ in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
    if zero_grad_after:
        opt.zero_grad(set_to_none=set_to_none)
    train_steps.kept = (opt, crit)  # the loss module stays alive, as in a real training script
    return x, y, loss
