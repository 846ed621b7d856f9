"""Every gradient exactly 0 for ``deadSteps`` steps while the loss is not 0: the whole model stuck.

The shape of PyTorchZeroToAll's hello-RNN (a one-layer RNN whose hidden state is the logits) with
a learning rate far too high: its weights reach ~1e5, tanh saturates at exactly ±1 and every
gradient is 0 while the loss stays put. Before this rule the watch only gave loss-trend advice.
"""

from __future__ import annotations

from typing import List

import torch
from torch import nn

from support.anomaly import watching


def hello_rnn(lr: float, epochs: int = 12) -> List[float]:
    torch.manual_seed(0)
    rnn = nn.RNN(5, 5, batch_first=True)
    optimizer = torch.optim.Adam(rnn.parameters(), lr=lr)
    x = torch.eye(5)[[0, 1, 0, 2, 3, 3]].view(1, 6, 5)
    y = torch.tensor([1, 0, 2, 3, 3, 4])
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        out, _ = rnn(x)
        loss = nn.functional.cross_entropy(out.view(-1, 5), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_a_saturated_rnn_is_reported_once_with_its_huge_weight() -> None:
    with watching(mode="log") as seen:
        hello_rnn(lr=1e5)
    [report] = seen.reports
    assert report["kind"] == "vanished_grad" and report["phase"] == "backward"
    assert report["params_with_grad"] == 4 and report["backwards"] == 3
    assert report["dead_since"] + 2 == report["step"]  # three optimizer steps in a row
    name, size = report["largest_weight"]
    assert name.startswith("rnn.") and size > 1e3 and report["huge"] is True
    assert report["loss"] > 0
    assert report["sentence"].startswith(f"No gradient at steps {report['dead_since']}-{report['step']}: every ")
    assert "was exactly 0 in 3 backward passes in a row" in report["sentence"]
    assert "saturate tanh and sigmoid units" in report["sentence"] and "learning rate too high" in report["sentence"]


def test_the_same_rnn_at_a_sane_rate_is_silent() -> None:
    with watching() as seen:
        losses = hello_rnn(lr=0.1)
    assert seen.reports == [] and losses[-1] < losses[0]


def test_dead_steps_sets_how_long_the_streak_must_be() -> None:
    with watching(mode="log", deadSteps=6) as seen:
        hello_rnn(lr=1e5)
    [report] = seen.reports
    assert report["backwards"] == 6 and report["dead_since"] + 5 == report["step"]
    for longer_or_off in (50, 0):
        with watching(mode="log", deadSteps=longer_or_off) as seen:
            hello_rnn(lr=1e5)
        assert [r for r in seen.reports if r["kind"] == "vanished_grad"] == []


class Rounded(nn.Module):
    """A regression through ``round``: its gradient is 0 everywhere (no straight-through estimator)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.round(self.fc(x) * 3)


def train_rounded(steps: int, learns_at: int = -1) -> list:
    """The reports of ``steps`` SGD steps of :class:`Rounded`; step ``learns_at`` skips the round."""
    torch.manual_seed(0)
    model = Rounded()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1) + 5
    with watching(mode="log") as seen:
        for step in range(steps):
            optimizer.zero_grad()
            out = model(x) if step != learns_at else model.fc(x)
            ((out - y) ** 2).mean().backward()
            optimizer.step()
    return seen.reports


def test_a_non_differentiable_op_names_the_usual_causes() -> None:
    [report] = train_rounded(4)
    assert report["kind"] == "vanished_grad" and report["huge"] is False
    assert "non-differentiable op (argmax, round, a comparison)" in report["sentence"]


def test_a_loss_of_exactly_zero_explains_zero_gradients() -> None:
    """A hinge at its floor: every gradient 0 because the fit is perfect, not because it is stuck."""
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.no_grad():
        model.bias.fill_(10.0)
    x = torch.randn(16, 4) * 0.01
    with watching() as seen:
        for _ in range(6):
            optimizer.zero_grad()
            loss = torch.relu(1.0 - model(x)).mean()
            loss.backward()
            optimizer.step()
    assert loss.item() == 0.0 and seen.reports == []


def test_one_parameter_still_learning_keeps_it_silent() -> None:
    """A frozen-at-zero branch beside a head that learns (a GAN's saturated side, a clamped scale)."""
    torch.manual_seed(0)
    stuck, head = nn.Linear(4, 4), nn.Linear(4, 1)
    optimizer = torch.optim.SGD([*stuck.parameters(), *head.parameters()], lr=0.01)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with watching() as seen:
        for _ in range(6):
            optimizer.zero_grad()
            dead = torch.round(stuck(x)).sum() * 0.0  # in the graph, gradient exactly 0
            loss = ((head(x) - y) ** 2).mean() + dead
            loss.backward()
            optimizer.step()
    assert stuck.weight.grad is not None and stuck.weight.grad.abs().max().item() == 0.0
    assert seen.reports == []


def test_a_streak_broken_by_one_step_that_learns_starts_again() -> None:
    [report] = train_rounded(6, learns_at=2)  # step 2 learns: the streak ends there
    assert report["dead_since"] == 3 and report["step"] == 5
