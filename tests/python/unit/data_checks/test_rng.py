"""``seed_all`` seeds what ``torch.manual_seed`` seeds for the generators in use, without its cost."""

from __future__ import annotations

import random
import traceback

import numpy as np
import torch

from torchdoctor.data_checks.rng import seed_all


def _draws() -> tuple:
    return random.random(), np.random.rand(), torch.rand(3)


def test_seed_all_draws_as_every_generator_seeded_by_hand():
    random.seed(7)
    np.random.seed(7)
    torch.manual_seed(7)
    expected = _draws()
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    seed_all(7)
    got = _draws()
    assert got[0] == expected[0] and got[1] == expected[1] and torch.equal(got[2], expected[2])


def test_seed_all_formats_no_stack(monkeypatch):
    # torch.manual_seed queues the seed of a device not initialised yet (CUDA, on any machine) with the
    # caller's stack formatted: a seeded redraw of each sample for duplicates cost 18x the plain loop
    if torch.cuda.is_initialized():
        return  # seeded at once there: nothing is queued
    monkeypatch.setattr(traceback, "format_stack", lambda *a, **k: (_ for _ in ()).throw(AssertionError("formatted")))
    seed_all(3)
    drawn = torch.rand(2)
    monkeypatch.undo()
    torch.manual_seed(3)
    assert torch.equal(drawn, torch.rand(2))
