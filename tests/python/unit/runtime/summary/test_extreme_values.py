"""Values at the edges of their dtype: float64 beyond 1e154 (whose squares overflow), complex64
magnitudes beyond 1e19, finite sums past the float range beside an Inf, and 64-bit integers
beyond 2**53 (where float64 rounds neighbours together). Every figure is checked against an
independent reference with a tolerance; a std that does not exist as a float is left out."""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from torchdoctor.runtime.stats.moments import combine
from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")

SCALE = 2.0**-1000  # exact: brings 1e300 near 1, where numpy's float64 squares do not overflow


def _huge_reference(values: np.ndarray):
    """Mean and sample std of huge float64 values, computed on an exactly scaled copy."""
    small = np.asarray(values, dtype=np.float64) * SCALE
    return small.mean() / SCALE, small.std(ddof=1) / SCALE


def _close(value, expected, rel=1e-9) -> bool:
    return value is not None and math.isclose(value, expected, rel_tol=rel)


HUGE = [
    np.array([1e300, -1e300, 1e299, 2.0]),  # small: one direct read
    np.tile(np.array([1e300, -7e299, 3e299]), 1_000_000),  # several blocks
]


@pytest.mark.parametrize("values", HUGE, ids=["small", "blocks"])
@pytest.mark.parametrize("kind", ["tensor", "ndarray"])
def test_float64_beyond_1e154_has_a_mean_and_std(values, kind):
    obj = torch.from_numpy(values.copy()) if kind == "tensor" else values.copy()
    info = stats(obj)
    mean, std = _huge_reference(values)
    assert _close(info["mean"], mean) and _close(info["std"], std)
    assert info["min"] == values.min() and info["max"] == values.max()  # not rescaled
    assert "σ=?" not in summarize(obj)


def test_a_tiny_value_beside_a_huge_one_keeps_its_extreme_and_is_not_a_zero():
    values = np.array([1e300, 1e-300] * 50)
    for obj in (torch.from_numpy(values.copy()), values):
        info = stats(obj)
        assert info["min"] == 1e-300 and info.get("zeros", 0) == 0
        assert _close(info["std"], _huge_reference(values)[1])


def test_huge_float64_expanded_and_sparse_count_every_position():
    column = torch.tensor([[1e300], [3e299]], dtype=torch.float64)
    expanded = column.expand(2, 1000)
    assert _close(stats(expanded)["std"], _huge_reference(expanded.numpy())[1])
    dense = torch.tensor([1e300, 0.0, 0.0, -5e299], dtype=torch.float64)
    mean, std = _huge_reference(dense.numpy())
    info = stats(dense.to_sparse())
    assert _close(info["mean"], mean) and _close(info["std"], std)


def test_complex64_magnitudes_beyond_float32_squares():
    z = torch.tensor([3e38, -3e38j, 1e38, 2.0] * 10, dtype=torch.complex64)
    magnitudes = np.abs(z.numpy().astype(np.complex128))
    info = stats(z)
    assert _close(info["mean"], magnitudes.mean(), rel=1e-6)
    assert _close(info["std"], magnitudes.std(ddof=1), rel=1e-6)


def test_a_std_beyond_the_largest_float_is_left_out_not_wrong():
    info = stats(torch.tensor([1.7e308, -1.7e308], dtype=torch.float64))  # std 2.4e308
    assert info["std"] is None and info["mean"] == 0.0
    assert info["min"] == -1.7e308 and info["max"] == 1.7e308


def test_combine_never_raises_on_overflowing_block_means():
    # ``x ** 2`` of a Python float raises OverflowError where ``x * x`` is inf
    rows = [(1, 1e300, 0.0, 1e300, 1e300, 0, 0, 0, 0), (1, -1e300, 0.0, -1e300, -1e300, 0, 0, 0, 0)]
    assert combine(rows)["std"] is None


@pytest.mark.parametrize("kind", ["tensor", "ndarray"])
@pytest.mark.parametrize("size", [3, 600_000])
def test_finite_values_summing_past_the_range_beside_an_inf(kind, size):
    values = np.array([np.inf, 1e308, 1e308] * (size // 3))
    obj = torch.from_numpy(values.copy()) if kind == "tensor" else values.copy()
    info = stats(obj)
    assert info["posinf"] == size // 3 and info["count"] == 2 * size // 3
    assert info["min"] == 1e308 and info["max"] == 1e308  # no Inf slipped into the extremes
    assert _close(info["mean"], 1e308) and info["std"] is not None and info["std"] < 1e300
    assert "?" not in summarize(obj)


def _exact(values, repeat=1):
    """Mean and sample std of ``values`` repeated ``repeat`` times, in exact fractions."""
    mean = Fraction(sum(values), len(values))
    squares = sum((Fraction(v) - mean) ** 2 for v in values) * repeat
    return float(mean), math.sqrt(squares / (len(values) * repeat - 1))


WIDE_INTS = [
    ([2**62 + 1, 2**62 + 3], torch.int64),
    ([2**53 + 1, 2**53 + 3, 2**53 + 4], torch.int64),
    ([-(2**62) - 1, -(2**62) - 3], torch.int64),
    ([2**63 - 1, 2**63 + 3], torch.uint64),  # both halves of the unsigned range
    ([2**64 - 1, 2**64 - 5], torch.uint64),
]


@pytest.mark.parametrize("values, dtype", WIDE_INTS)
@pytest.mark.parametrize("repeat", [1, 300_000])
def test_64_bit_integers_beyond_2_53_have_their_true_spread(values, dtype, repeat):
    data = values * repeat
    t = torch.tensor(data, dtype=dtype)
    mean, std = _exact(values, repeat)
    info = stats(t)
    assert info["min"] == min(values) and info["max"] == max(values)
    assert _close(info["mean"], mean, rel=1e-15) and _close(info["std"], std)
    if dtype == torch.int64:
        arr = np.array(data, dtype=np.int64)
        assert _close(stats(arr)["std"], info["std"], rel=1e-9)


def test_neighbouring_wide_integers_print_as_different_extremes():
    line = summarize(torch.tensor([2**62 + 1, 2**62 + 3] * 5))
    assert f"[{2**62 + 1}, {2**62 + 3}]" in line and "σ=0 " not in line


def test_a_spread_beyond_2_63_is_read_as_before():
    info = stats(torch.tensor([-(2**63), 2**63 - 1]))
    assert _close(info["std"], math.sqrt(2) * 2**63, rel=1e-9) and abs(info["mean"]) <= 1.0


def test_reading_changes_nothing():
    t = torch.tensor([1e300, -1e300, 3.0] * 1000, dtype=torch.float64, requires_grad=True)
    wide = torch.tensor([2**62 + 1, 2**62 + 3] * 1000)
    before, rng = t.detach().clone(), torch.get_rng_state()
    versions = (t._version, wide._version)
    summarize(t), summarize(wide)
    assert torch.equal(t.detach(), before) and torch.equal(rng, torch.get_rng_state())
    assert (t._version, wide._version) == versions and t.grad is None and t.grad_fn is None
