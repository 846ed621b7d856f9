"""8-bit integers read by their histogram: exact against Python integer arithmetic, every layout."""

import math
import warnings
from fractions import Fraction

import pytest
import torch

from torchdoctor.runtime.stats import byte_stats, raw_pass
from torchdoctor.runtime.stats.tensor_stats import value_stats

pytestmark = pytest.mark.filterwarnings("error")

BIG = raw_pass.PRECISE_BELOW + 4_321  # past the small-tensor path: the histogram is used


def exact(t):
    """count, min, max, mean and sample std from the values as Python integers."""
    values = [int(v) for v in t.reshape(-1).tolist()]
    n, total = len(values), sum(values)
    spread = n * sum(v * v for v in values) - total * total  # n * m2, an exact integer
    return n, min(values), max(values), float(Fraction(total, n)), math.sqrt(Fraction(spread, n * (n - 1)))


def make(dtype, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    low, high = (0, 256) if dtype == torch.uint8 else (-128, 128)
    return torch.randint(low, high, (n,), generator=g).to(dtype)


def check(t):
    got = value_stats(t)
    n, low, high, mean, std = exact(t)
    assert (got["count"], got["min"], got["max"]) == (n, low, high)
    assert got["mean"] == pytest.approx(mean, rel=1e-15, abs=1e-15)
    assert got["std"] == pytest.approx(std, rel=1e-14)
    assert "zeros" not in got and got["nan"] == got["posinf"] == got["neginf"] == 0


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_contiguous_tensors_are_exact(dtype):
    check(make(dtype, BIG))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
@pytest.mark.parametrize("how", ["step", "transpose", "expand", "select"])
def test_strided_views_are_exact(dtype, how):
    t = make(dtype, 4 * BIG, seed=1)
    view = {
        "step": lambda: t[::3],
        "transpose": lambda: t.view(4, BIG).t(),
        "expand": lambda: t[:BIG].view(1, BIG).expand(3, BIG),
        "select": lambda: t.view(4, BIG)[:, 5:].reshape(-1)[::2],
    }[how]()
    check(view)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_many_blocks_and_the_extreme_values(dtype, monkeypatch):
    monkeypatch.setattr(byte_stats, "BLOCK", 4096)  # dozens of blocks on a small tensor
    t = make(dtype, BIG, seed=2)
    info = torch.iinfo(dtype)
    t[0], t[-1], t[BIG // 2] = info.min, info.max, 0
    check(t)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_a_constant_tensor_has_std_exactly_zero(dtype):
    got = value_stats(torch.full((BIG,), -7 if dtype == torch.int8 else 200, dtype=dtype))
    assert got["std"] == 0.0 and got["min"] == got["max"] == got["mean"]


def test_only_cpu_8_bit_dense_tensors_take_the_histogram():
    assert byte_stats.applies(torch, torch.zeros(3, dtype=torch.uint8))
    assert byte_stats.applies(torch, torch.zeros(3, dtype=torch.int8))
    assert not byte_stats.applies(torch, torch.zeros(3, dtype=torch.int16))
    assert not byte_stats.applies(torch, torch.zeros(3, dtype=torch.uint8, device="meta"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated; still met in the wild
        q = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.quint8)
    assert not byte_stats.applies(torch, q)
