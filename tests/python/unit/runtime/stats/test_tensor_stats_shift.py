"""The fast path sums squares about one sampled shift ``c``: exact even when the sample misleads."""

import math
import warnings

import pytest
import torch

from support.stats_reference import assert_matches, reference
from torchdoctor.runtime.stats import tensor_stats
from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
def passes(monkeypatch):
    """How many fast passes over the blocks ``value_stats`` made."""
    calls = []
    original = tensor_stats._fast_rows

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(tensor_stats, "_fast_rows", counted)
    monkeypatch.setattr(tensor_stats, "BLOCK_CPU", 1000)  # many blocks
    return calls


def test_well_sampled_tensor_takes_one_pass(passes):
    t = torch.randn(20_000, generator=torch.Generator().manual_seed(0)) * 1e-3 + 1000
    assert_matches(stats(t), reference(t), 2e-5)
    assert len(passes) == 1


def test_sample_aligned_with_spikes_takes_a_second_pass_and_stays_exact(passes):
    count = 20_000
    step = (count - 1) // (tensor_stats.SHIFT_SAMPLE - 1)
    t = torch.zeros(count)
    t[::step] = 1e6  # every sampled element is a spike: c = 1e6, the mean is ~1.3e4
    assert_matches(stats(t), reference(t), 1e-6)
    assert len(passes) == 2


def test_shift_ignores_non_finite_samples(passes):
    t = torch.full((20_000,), 7.0)
    t[::50] = math.nan
    t[1::50] = math.inf
    got = stats(t)
    assert (got["nan"], got["posinf"], got["count"]) == (400, 400, 19_200)
    assert got["mean"] == 7.0 and got["std"] == 0.0


def test_sorted_values_stay_exact(passes):
    t = torch.linspace(-3.0, 5e4, 50_000)
    assert_matches(stats(t), reference(t), 2e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_sparse_tensor_storing_no_values_is_all_zeros(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0, dtype=dtype), (3, 3))
    got = stats(t)
    assert (got["count"], got["min"], got["max"], got["mean"], got["std"]) == (9, 0, 0, 0, 0)
    assert "all zeros" in summarize(t)
