"""The first pass sums about 0 at memory speed; a second pass about the mean restores precision
only when the sums show that the mean dwarfs the spread. Complex tensors sum about a sample."""

import math
import warnings

import pytest
import torch

from support.stats_reference import assert_matches, reference
from torchdoctor.runtime.stats import raw_pass, tensor_stats
from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
def passes(monkeypatch):
    """``{"raw": n, "shifted": n}``: how many passes of each kind ``value_stats`` made."""
    calls = {"raw": 0, "shifted": 0}
    raw, shifted = tensor_stats._first_pass, tensor_stats._fast_rows

    def counted_raw(*args, **kwargs):
        calls["raw"] += 1
        return raw(*args, **kwargs)

    def counted_shifted(*args, **kwargs):
        calls["shifted"] += 1
        return shifted(*args, **kwargs)

    monkeypatch.setattr(tensor_stats, "_first_pass", counted_raw)
    monkeypatch.setattr(tensor_stats, "_fast_rows", counted_shifted)
    monkeypatch.setattr(tensor_stats, "BLOCK_CPU", 4096)  # many blocks
    monkeypatch.setattr(raw_pass, "PRECISE_BELOW", 0)  # the float32 path, as at real sizes
    return calls


def test_well_conditioned_tensor_takes_one_pass(passes):
    t = torch.randn(50_000, generator=torch.Generator().manual_seed(0)) * 3 + 1
    assert_matches(stats(t), reference(t), 2e-5)
    assert passes == {"raw": 1, "shifted": 0}


def test_mean_dwarfing_the_spread_takes_a_second_pass_and_stays_exact(passes):
    t = torch.randn(20_000, generator=torch.Generator().manual_seed(0)) * 1e-3 + 1000
    assert_matches(stats(t), reference(t), 2e-5)
    assert passes == {"raw": 1, "shifted": 1}


def test_constant_tensor_needs_no_second_pass(passes):
    got = stats(torch.full((20_000,), 7.0))
    assert (got["mean"], got["std"], got["min"], got["max"]) == (7.0, 0.0, 7.0, 7.0)
    assert passes == {"raw": 1, "shifted": 0}


def test_complex_sample_aligned_with_spikes_takes_a_second_pass_and_stays_exact(passes):
    count = 20_000
    step = (count - 1) // (tensor_stats.SHIFT_SAMPLE - 1)
    t = torch.zeros(count, dtype=torch.complex64)
    t[::step] = 1e6  # every sampled element is a spike: c = 1e6, the mean is ~1.3e4
    assert_matches(stats(t), reference(t), 1e-6)
    assert passes == {"raw": 0, "shifted": 2}


def test_non_finite_values_leave_the_others_exact(passes):
    t = torch.full((20_000,), 7.0)
    t[::50] = math.nan
    t[1::50] = math.inf
    got = stats(t)
    assert (got["nan"], got["posinf"], got["count"]) == (400, 400, 19_200)
    assert got["mean"] == 7.0 and got["std"] == 0.0


def test_sorted_values_stay_exact(passes):
    t = torch.linspace(-3.0, 5e4, 50_000)
    assert_matches(stats(t), reference(t), 2e-5)


def test_float32_squares_that_overflow_are_summed_in_float64(passes):
    t = torch.rand(20_000, generator=torch.Generator().manual_seed(1)) * 1e18  # x**2 sums past f32's 3.4e38
    got = stats(t)
    assert got["std"] is not None and math.isfinite(got["std"])
    assert_matches(got, reference(t), 2e-5)
    assert passes["raw"] == 2  # once in float32, once in float64


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_sparse_tensor_storing_no_values_is_all_zeros(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0, dtype=dtype), (3, 3))
    got = stats(t)
    assert (got["count"], got["min"], got["max"], got["mean"], got["std"]) == (9, 0, 0, 0, 0)
    assert "all zeros" in summarize(t)
