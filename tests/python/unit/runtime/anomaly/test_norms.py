"""A normalisation layer built with eps=0 turns a constant group of its input into 0/0: the sentence
says so (``norms.py``), instead of a bare "its inputs were finite"."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from support.anomaly import watching


def first_report(layer: nn.Module, x: torch.Tensor):
    model = nn.Sequential(layer, nn.Linear(x.shape[-1], 1))
    with watching(mode="log") as seen:
        model(x).sum().backward()
    return seen.reports[0]


@pytest.mark.parametrize(
    "layer, x, unit, groups",
    [
        (nn.LayerNorm(6, eps=0.0), torch.ones(4, 6), "rows", 4),
        (nn.GroupNorm(2, 4, eps=0.0), torch.ones(3, 4, 6), "groups", 6),
    ],
)
def test_a_norm_with_eps_0_on_a_constant_input_says_0_over_0(layer, x, unit, groups):
    report = first_report(layer, x)
    assert report["kind"] == "nonfinite_output" and report["module"] == "0" and not report["inputs_bad"]
    assert report["zero_spread"]["constant"] == report["zero_spread"]["groups"] == groups
    name = type(layer).__name__
    assert (
        f"its inputs were finite: `{name}` built with eps=0 divides each of its {groups} {unit} by that "
        f"{unit[:-1]}'s standard deviation, and {groups} of them are constant (standard deviation 0): 0/0 is NaN"
    ) in report["sentence"]


@pytest.mark.skipif(not hasattr(nn, "RMSNorm"), reason="a torch without nn.RMSNorm")
def test_an_rms_norm_with_eps_0_names_its_rows_of_zeros_only():
    x = torch.randn(5, 6)
    x[1:3] = 0.0  # two padded rows
    report = first_report(nn.RMSNorm(6, eps=0.0), x)
    assert (report["zero_spread"]["constant"], report["zero_spread"]["groups"]) == (2, 5)
    assert (
        "divides each of its 5 rows by that row's root mean square, and 2 of them are all zeros" in report["sentence"]
    )


def test_a_norm_layer_whose_nan_is_not_a_constant_group_says_nothing_of_eps():
    layer = nn.LayerNorm(6, eps=0.0)
    with torch.no_grad():
        layer.weight[2] = float("inf")  # Inf x 0 somewhere, not a 0/0
    report = first_report(layer, torch.randn(4, 6))
    assert "zero_spread" not in report and "eps=0" not in report["sentence"]
