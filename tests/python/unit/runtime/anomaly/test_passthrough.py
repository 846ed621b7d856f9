"""Outputs bounded from their input's extremes (ReLU, pooling...) agree with reading them."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from support.anomaly import data, train, watching
from torchdoctor.runtime.anomaly.detect import SPLIT_AT, extremes
from torchdoctor.runtime.anomaly.passthrough import bounds_function

MODULES = [nn.ReLU(), nn.ReLU6(), nn.LeakyReLU(0.1), nn.LeakyReLU(-0.5), nn.Hardtanh(-2, 3), nn.Tanh(), nn.Sigmoid()]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: repr(m))
@pytest.mark.parametrize("scale", [0.5, 4.0, 50.0])
def test_monotone_bounds_are_the_true_extremes(module, scale):
    x = torch.arange(-100, 71, dtype=torch.float64) * scale / 100  # 0 included: the bounds are exact
    low, high = bounds_function(type(module))(*extremes(x), module)
    assert (low, high) == pytest.approx(extremes(module(x)), abs=1e-12)


@pytest.mark.parametrize(
    "module",
    [nn.MaxPool1d(2), nn.AvgPool1d(3), nn.AdaptiveAvgPool1d(4), nn.Flatten(), nn.Identity()],
    ids=lambda m: type(m).__name__,
)
def test_pooling_and_reshaping_stay_within_the_input_range(module):
    x = torch.randn(2, 3, 16) * 7
    low, high = bounds_function(type(module))(*extremes(x), module)
    out_low, out_high = extremes(module(x))
    assert low <= out_low and out_high <= high


def test_other_modules_are_read():
    assert bounds_function(nn.Linear) is None and bounds_function(nn.LayerNorm) is None


def test_dropout_and_gelu_bounds_follow_from_the_input():
    dropout = nn.Dropout(0.5).train()
    assert bounds_function(nn.Dropout)(-1.0, 3.0, dropout) == (-2.0, 6.0)
    assert bounds_function(nn.Dropout)(-1.0, 3.0, dropout.eval()) == (-1.0, 3.0)
    low, high = bounds_function(nn.GELU)(-3.0, 2.0, nn.GELU())
    x = torch.linspace(-3.0, 2.0, 100001)
    exact = nn.functional.gelu(x)
    assert abs(low - exact.min().item()) < 1e-4 and abs(high - exact.max().item()) < 1e-4
    assert bounds_function(nn.GELU)(0.0, 0.0, nn.GELU()) == (0.0, 0.0)


def test_an_in_place_relu_is_read_and_still_found_dead():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.act, self.out = nn.Linear(10, 8), nn.ReLU(inplace=True), nn.Linear(8, 2)

        def forward(self, x):
            return self.out(self.act(self.fc(x)))

    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model.fc.weight.fill_(-1.0)
        model.fc.bias.fill_(-5.0)
    x, y = data()
    with watching() as seen:
        train(model, x.abs(), y)
    assert seen.kinds == ["dead_output"] and seen.reports[0]["qualname"] == "model.act"


def test_big_tensors_take_the_split_reduction_with_the_same_answer():
    x = torch.randn(SPLIT_AT * 2)
    assert extremes(x) == (x.min().item(), x.max().item())
    x[12345] = float("nan")
    low, high = extremes(x)
    assert low != low and high != high
