"""Misses found reviewing the 2026-12-06 false-alarm fixes: a real -Inf behind a masking op's node, a
learning rate too high beside a same-shape copy the step never calls, and a loss that dipped below 0
once and settled above it."""

from __future__ import annotations

import copy

import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.loss_health import LossHealth


class LogProbs(nn.Module):
    """log of a ReLU's output (zeros: -Inf), its padding then masked with 0: the mask hides nothing."""

    def __init__(self, where: bool) -> None:
        super().__init__()
        self.lin, self.where = nn.Linear(5, 4), where

    def forward(self, x, pad):
        logp = torch.log(torch.relu(self.lin(x)))
        return torch.where(pad, torch.zeros(()), logp) if self.where else logp.masked_fill(pad, 0.0)


def test_a_log_of_zeros_under_a_padding_mask_is_still_an_inf_output():
    pad = torch.zeros(6, 4, dtype=torch.bool)
    pad[:, 3] = True
    for where in (False, True):
        torch.manual_seed(0)
        with watching() as seen:
            out = LogProbs(where)(torch.randn(6, 5), pad)
        assert bool(torch.isneginf(out).any())
        assert seen.kinds == ["nonfinite_output"]


def test_illegal_actions_masked_in_two_steps_are_silent():
    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(5, 4)

        def forward(self, x, a, b):
            return self.lin(x).masked_fill(a, float("-inf")).masked_fill(b, float("-inf"))

    a, b = torch.zeros(3, 4, dtype=torch.bool), torch.zeros(3, 4, dtype=torch.bool)
    a[:, 0], b[:, 1] = True, True
    with watching() as seen:
        Policy()(torch.randn(3, 5), a, b)
    assert seen.reports == []


def _blow_up(copy_kind: str):
    """A regression whose loss jumps 30x at step 12 (a learning rate too high), beside a same-shape
    copy that the step never calls: a best-so-far snapshot, or an EMA kept for evaluation."""
    torch.manual_seed(0)
    q = nn.Linear(4, 2)
    best = copy.deepcopy(q) if copy_kind == "best" else None
    ema = torch.optim.swa_utils.AveragedModel(q) if copy_kind == "ema" else None
    optimizer = torch.optim.SGD(q.parameters(), lr=0.05)
    x = torch.randn(32, 4)
    with watching() as seen:
        for step in range(16):
            loss = nn.functional.mse_loss(q(x), x @ torch.ones(4, 2) + (30.0 if step == 12 else 0.0))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if ema is not None:
                ema.update_parameters(q)
    assert best is not None or ema is not None
    return [r for r in seen.reports if r["kind"] == "loss_spike"]


def test_a_spike_beside_a_copy_the_step_never_calls_is_still_an_anomaly():
    for kind in ("best", "ema"):
        report = _blow_up(kind)[0]
        assert report["advice"] is False and "lagging_copy" not in report


def _rules(values):
    health = LossHealth(spike_factor=10.0)
    return [f["rule"] for v in values for f in health.observe(v)]


def test_a_loss_that_dipped_below_0_once_and_settled_above_still_spikes():
    assert _rules([2.0, 1.5, -0.01, 1.0, 0.9] + [0.5] * 25 + [80.0]) == ["spike"]
    # while the window still holds the negative loss, its median is no scale: nothing said
    assert _rules([2.0, 1.5, -0.01, 1.0, 0.9] + [0.5] * 10 + [80.0]) == []
