"""Small tensors proven finite by one batched norm; everything else left to the exact check."""

import math

import pytest
import torch

from torchdoctor.runtime.stats import budget, finite_check
from torchdoctor.runtime.summary import aggregates
from torchdoctor.runtime.summary.api import stats

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]


@pytest.mark.parametrize("dtype", FLOATS)
def test_finite_tensors_are_proven_and_non_finite_ones_never(dtype):
    clean = torch.randn(50, dtype=dtype)
    bad = [clean.clone() for _ in range(3)]
    for t, value in zip(bad, (math.nan, math.inf, -math.inf)):
        t[7] = value
    assert finite_check.surely_finite(torch, [clean] + bad) == [True, None, None, None]


def test_a_norm_that_overflows_proves_nothing():
    huge = torch.full((10,), 1e20)  # finite, but its squares overflow float32
    half = torch.full((1000,), 300.0, dtype=torch.float16)  # norm 9487 fits; 3000 values: no
    more = torch.full((60000,), 300.0, dtype=torch.float16)
    assert finite_check.surely_finite(torch, [huge, half, more]) == [None, True, None]


def test_only_small_plain_float_tensors_are_batched():
    class Sub(torch.Tensor):
        pass

    sub = torch.randn(4).as_subclass(Sub)
    big = torch.randn(finite_check.BATCH_ELEMENTS + 1)
    others = [torch.arange(4), torch.empty(0), torch.randn(3, device="meta"), sub, big, None]
    assert finite_check.surely_finite(torch, others) == [None] * len(others)


def test_mixed_dtypes_in_one_list_keep_their_positions():
    items = [torch.randn(3), torch.randn(3, dtype=torch.float64), torch.tensor([math.nan]), torch.randn(2).half()]
    assert finite_check.surely_finite(torch, items) == [True, True, None, True]


def _walked(model):
    with budget.activate(budget.Budget(None, object())):
        return stats(model)


def test_the_walk_still_finds_nan_and_inf_in_params_grads_and_buffers():
    model = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(300)], torch.nn.BatchNorm1d(3))
    model(torch.randn(4, 3)).sum().backward()
    with torch.no_grad():
        model[5].weight[0, 0] = math.inf
        model[299].bias.grad[1] = math.nan
        model[300].running_mean[0] = math.nan
    got = _walked(model)
    assert got["nan_in"] == ["5.weight", "300.running_mean"]
    assert got["grad_nan_in"] == ["299.bias"]


def test_huge_finite_weights_are_checked_exactly_and_not_flagged():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
    with torch.no_grad():
        model[1].weight.fill_(1e20)  # its norm overflows: the exact check says finite
    got = _walked(model)
    assert got["nan_in"] == [] and got["grad_nan_in"] == [] and not got.get("pending")


def test_a_chunked_walk_cut_by_the_budget_resumes_and_completes():
    model = torch.nn.Sequential(*[torch.nn.Linear(2, 2) for _ in range(3 * aggregates.CHUNK)])
    with torch.no_grad():
        model[-1].weight[0, 0] = math.nan
    epoch = object()
    with budget.activate(budget.Budget(1e-9, epoch)):
        first = stats(model)
    with budget.activate(budget.Budget(None, epoch)):
        last = stats(model)
    assert first.get("pending") and not last.get("pending")
    assert last["nan_in"] == [f"{3 * aggregates.CHUNK - 1}.weight"]
