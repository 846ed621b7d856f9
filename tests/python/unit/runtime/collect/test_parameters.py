"""The gradients' moment: the same stop shows the same numbers, whatever the time budget sampled."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from support.collect import snap
from torchdoctor.runtime.collect import install as collect_install


def clipped_step(seed: int = 0) -> nn.Module:
    """One backward with big gradients, then the program's own clipping to max-norm 1."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    loss = model(torch.randn(32, 6) * 20).pow(2).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    return model


def total_norm(s: dict) -> float:
    return math.sqrt(sum(p["grad"]["norm"] ** 2 for p in s["parameters"]))


@pytest.mark.parametrize("fraction", [1.0, 0.0])
def test_after_clipping_the_rows_are_the_clipped_gradients(fraction):
    """Sampled (budget 1) or not (budget 0), a pause after clip_grad_norm_ reads the clipped values."""
    collect_install.install(fraction)
    try:
        model = clipped_step()
        s = snap()
    finally:
        collect_install.uninstall()
    assert total_norm(s) == pytest.approx(1.0, rel=1e-3)
    for p in s["parameters"]:
        g = dict(model.named_parameters())[p["name"]].grad
        assert p["grad"]["source"] == "live" and p["changedSinceBackward"]
        assert p["grad"]["maxAbs"] == pytest.approx(float(g.abs().max()), rel=1e-5)


def test_two_runs_of_one_stop_agree_whatever_was_sampled():
    seen = []
    for fraction in (1.0, 0.0, 1.0):
        collect_install.install(fraction)
        try:
            clipped_step(seed=3)
            seen.append([(p["name"], p["grad"]["meanAbs"], p["grad"]["source"]) for p in snap()["parameters"]])
        finally:
            collect_install.uninstall()
    assert seen[0] == seen[1] == seen[2]


def test_freed_gradients_say_they_are_from_before_clipping():
    collect_install.install(1.0)
    try:
        model = clipped_step()
        model.zero_grad(set_to_none=True)
        s = snap()
    finally:
        collect_install.uninstall()
    assert all(p["grad"]["source"] == "backward" for p in s["parameters"])
    assert all("before any clipping" in p["gradNote"] for p in s["parameters"])
    assert total_norm(s) > 1.5  # the backward's own values, not clipped
