"""The watch's fast paths give the answers of the plain computations they replace."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.detect import ITEMS_UP_TO, grad_norms
from torchdoctor.runtime.anomaly.loss_health import TREND_MIN
from torchdoctor.runtime.anomaly.passthrough import _relu

VALUES = [-3.5, -1.0, -0.0, 0.0, 0.25, 2.0, 7.0]


def _relu_by_list(low, high):
    """The bounds as the generic monotone rule computed them: min and max of f at low, high (and 0)."""
    values = [max(low, 0.0), max(high, 0.0)] + ([0.0] if low < 0.0 < high else [])
    return min(values), max(values)


@pytest.mark.parametrize("low", VALUES)
@pytest.mark.parametrize("high", VALUES)
def test_relu_bounds_written_out_are_the_generic_ones_to_the_sign_of_zero(low, high):
    if low > high:
        return
    got, want = _relu(low, high, None), _relu_by_list(low, high)
    assert got == want and [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in want]


@pytest.mark.parametrize("count", [1, ITEMS_UP_TO, ITEMS_UP_TO + 1, 40])
def test_gradient_norms_read_one_by_one_or_stacked_agree(count):
    g = torch.Generator().manual_seed(count)
    grads = [torch.randn(3 + i, generator=g) * (i + 1) for i in range(count)]
    grads[0][0] = float("nan") if count > 1 else grads[0][0]
    norms = grad_norms(grads)
    want = [torch.linalg.vector_norm(t).item() for t in grads]
    assert len(norms) == count
    for got, expected in zip(norms, want):
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, rel=1e-6)


def _train(model, steps=3, lr=0.1):
    torch.manual_seed(0)
    x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_the_loss_judged_is_the_value_the_loss_module_returned():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    with watching() as seen:
        losses = _train(model, steps=6)
        series = list(seen.watch.losses.by_site.values())
    assert seen.kinds == []
    assert len(series) == 1 and series[0].history == losses


def test_two_backward_call_sites_keep_two_series_and_each_site_one():
    torch.manual_seed(0)
    a, b = nn.Linear(4, 1), nn.Linear(4, 1)
    x = torch.randn(16, 4)
    with watching() as seen:
        for _ in range(4):
            a(x).pow(2).mean().backward()
            b(x).pow(2).mean().backward()
        sites = list(seen.watch.losses.labels.values())
    assert len(sites) == 2 and sites[0] != sites[1]


def test_a_gradient_stored_as_a_parameter_is_checked_like_any_other():
    """``p.grad = nn.Parameter(...)`` (a script may assign one by hand) is a dense float
    gradient: the fast filter of fresh gradients agrees with ``checkable`` (it once skipped it)."""
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    model.weight.grad = nn.Parameter(torch.zeros_like(model.weight))
    model.bias.grad = nn.Parameter(torch.zeros_like(model.bias))
    with watching(mode="log", firstOnly=False) as seen:
        for step in range(3):
            model(torch.randn(8, 4) * (1e9 if step == 1 else 1.0)).mean().backward()
    assert "exploding_grad" in [r["kind"] for r in seen.reports]
    assert seen.watch.errors == []


class _Muted(nn.Module):
    """``muted`` takes part in every step, yet its gradients are exactly zero."""

    def __init__(self) -> None:
        super().__init__()
        self.used, self.muted = nn.Linear(4, 1), nn.Linear(4, 1)

    def forward(self, x):
        return self.used(x) + 0.0 * self.muted(x)


def test_the_advice_names_the_parameters_whose_gradients_were_zero():
    """The gradient check keeps only norms in the usual case (:func:`detect.grad_norms`): a zero
    norm is a zero gradient, which the "loss not decreasing" advice names."""
    torch.manual_seed(0)
    model, x = _Muted(), torch.randn(16, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # the loss stays where it is
    with watching(mode="log") as seen:
        for _ in range(TREND_MIN):
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
        advice = [r for r in seen.reports if r["kind"] == "loss_not_decreasing"]
    # named as the anomaly lines name parameters: with the script's variable for the model
    assert len(advice) == 1 and advice[0]["zero_grad_params"] == ["model.muted.weight", "model.muted.bias"]
    assert "are exactly 0 (e.g. `model.muted.weight`)" in advice[0]["sentence"]
