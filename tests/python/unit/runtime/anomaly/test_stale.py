"""A missing zero_grad is an optimizer stepping on spent gradients; accumulation and GANs are not."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from torchdoctor.runtime.anomaly.stale import StaleGradTracker


def step(model, optimizer, tracker, zero=True, set_to_none=True, backwards=1):
    """One training step, with the tracker called where the watch's hooks call it."""
    if zero:
        optimizer.zero_grad(set_to_none=set_to_none)
    for _ in range(backwards):
        tracker.before_backward()
        model(torch.ones(4, 3)).sum().backward()
    found = tracker.before_step(optimizer)
    optimizer.step()
    tracker.after_step(optimizer)
    return found


@pytest.fixture
def setup():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    return model, torch.optim.SGD(model.parameters(), lr=0.1), StaleGradTracker()


def test_missing_zero_grad_is_found_at_the_second_step(setup):
    model, optimizer, tracker = setup
    assert step(model, optimizer, tracker, zero=False) is None
    found = step(model, optimizer, tracker, zero=False)
    assert found["params"] == 2 and found["example"] is model.weight


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_either_way_is_clean(setup, set_to_none):
    model, optimizer, tracker = setup
    assert [step(model, optimizer, tracker, set_to_none=set_to_none) for _ in range(4)] == [None] * 4


def test_accumulating_several_backwards_before_one_step_is_fine(setup):
    model, optimizer, tracker = setup
    assert [step(model, optimizer, tracker, backwards=4) for _ in range(3)] == [None] * 3


def test_gan_style_loops_stay_quiet():
    """G's backward flows into D's spent gradients, but D zeroes them before its next step."""
    torch.manual_seed(0)
    g, d = nn.Linear(2, 3), nn.Linear(3, 1)
    opt_g, opt_d = torch.optim.SGD(g.parameters(), lr=0.1), torch.optim.SGD(d.parameters(), lr=0.1)
    tracker = StaleGradTracker()
    found = []
    for _ in range(4):
        d.zero_grad()
        tracker.before_backward()
        d(g(torch.randn(4, 2)).detach()).mean().backward()
        found.append(tracker.before_step(opt_d))
        opt_d.step()
        tracker.after_step(opt_d)
        g.zero_grad()
        tracker.before_backward()
        (-d(g(torch.randn(4, 2)))).mean().backward()
        found.append(tracker.before_step(opt_g))
        opt_g.step()
        tracker.after_step(opt_g)
    assert found == [None] * 8
