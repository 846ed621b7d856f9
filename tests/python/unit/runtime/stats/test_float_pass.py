"""The CPU float pass: extremes from the integer view of the bits where no sign bit is set, the
float extremes otherwise; zeros (+0 and -0) exact either way; NaN/Inf found in any block."""

import math

import pytest
import torch

from support.stats_reference import assert_matches, reference
from torchdoctor.runtime.stats import float_pass, raw_pass, tensor_stats
from torchdoctor.runtime.summary.api import stats

pytestmark = pytest.mark.filterwarnings("error")

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 1000 values (float32), at the float32 sums of real sizes."""
    monkeypatch.setattr(tensor_stats, "BLOCK_CPU", 1000 * 4 // float_pass.bytes_per_element())
    monkeypatch.setattr(raw_pass, "PRECISE_BELOW", 0)
    return float_pass.block(tensor_stats.BLOCK_CPU, {"work": torch.float32})


def blocks_of(pieces, dtype):
    """One tensor whose consecutive 1000-value blocks are ``pieces`` (float64 lists or tensors)."""
    return torch.cat([torch.as_tensor(p, dtype=torch.float64) for p in pieces]).to(dtype)


def values(seed, n=1000, low=0.5, high=2.0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, generator=g, dtype=torch.float64) * (high - low) + low


def zeros_of(t):
    return int((t == 0).sum())


@pytest.mark.parametrize("dtype", FLOATS)
def test_blocks_of_every_sign_pattern_stay_exact(small_blocks, dtype):
    positive = values(1)
    relu = values(2).clone()
    relu[::3] = 0.0  # min exactly +0: zeros counted on the integer view
    mixed = values(3) - 1.25
    mixed[10] = 0.0
    negative = -values(4)
    negative_with_zero = -values(5)
    negative_with_zero[7] = -0.0  # max is -0.0: counted by the bool cast
    pieces = [positive, relu, mixed, negative, relu, negative_with_zero, positive, mixed]
    t = blocks_of(pieces, dtype)
    assert small_blocks == 1000 and t.numel() == 8 * small_blocks
    got = stats(t)
    assert_matches(got, reference(t), 2e-5 if dtype != torch.float64 else 1e-9)
    assert got["zeros"] == zeros_of(t)


@pytest.mark.parametrize("dtype", FLOATS)
def test_negative_zero_among_non_negative_values_is_a_zero(small_blocks, dtype):
    relu = values(6)
    relu[3], relu[4], relu[5] = -0.0, 0.0, -0.0  # sign bits set: the integer view proves nothing
    t = blocks_of([values(7), relu, values(8)], dtype)
    got = stats(t)
    assert got["zeros"] == 3 and got["min"] == 0.0 and got["count"] == t.numel()
    assert_matches(got, reference(t), 2e-5 if dtype != torch.float64 else 1e-9)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("special", [math.nan, math.inf, -math.inf, -math.nan])
def test_non_finite_values_in_a_non_negative_block_are_counted(small_blocks, dtype, special):
    relu = values(9)
    relu[0] = 0.0
    relu[500] = special  # +NaN and +Inf lie above +Inf's bits; -NaN and -Inf set the sign bit
    t = blocks_of([values(10), relu, values(11)], dtype)
    got = stats(t)
    assert_matches(got, reference(t), 2e-5 if dtype != torch.float64 else 1e-9)
    assert got["zeros"] == 1 and got["count"] == t.numel() - 1  # the count is of finite values


def test_the_integer_view_reads_the_extremes_of_non_negative_blocks(small_blocks, monkeypatch):
    seen = []
    aminmax = torch.aminmax

    def spy(x, *args, **kwargs):
        seen.append(x.dtype)
        return aminmax(x, *args, **kwargs)

    monkeypatch.setattr(torch, "aminmax", spy)
    relu = values(12)
    relu[::2] = 0.0
    t = blocks_of([relu, relu, values(13) - 1.25, values(14) - 1.25, relu, relu], torch.float32)
    got = stats(t)
    # two non-negative blocks by their bits; the mixed block tried them, then its float
    # extremes; the next mixed one starts with floats; back on bits after a non-negative block
    assert seen == [torch.int32, torch.int32, torch.int32, torch.float32, torch.float32, torch.float32, torch.int32]
    assert got["zeros"] == zeros_of(t) and got["min"] == float(t.min()) and got["max"] == float(t.max())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_floats_read_their_own_bits_exactly(small_blocks, dtype):
    """Half floats' extremes and zeros come from their int16 bits before the float32 copy: the
    largest finite value, the smallest subnormal and +0 come back exact, +Inf is counted."""
    info = torch.finfo(dtype)
    relu = values(15).to(dtype)
    relu[::4] = 0.0
    relu[1] = info.max
    relu[2] = info.smallest_normal / 4  # a subnormal
    with_inf = values(16).to(dtype)
    with_inf[9] = math.inf
    t = torch.cat([relu, values(17).to(dtype), with_inf])
    got = stats(t)
    assert got["max"] == float(info.max) and got["min"] == 0.0
    assert got["zeros"] == zeros_of(t) and got["posinf"] == 1
    assert_matches(got, reference(t), 2e-5)
    pieces = float_pass._Bits(torch, dtype).extremes(values(18).to(dtype))
    assert pieces is not None and pieces[0] == float(values(18).to(dtype).min())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("special", [None, math.nan, -math.nan, math.inf, -math.inf])
def test_half_floats_of_both_signs_and_all_negative_stay_exact(small_blocks, dtype, special):
    """Both signs: the maximum from the int16 bits, the minimum from the float32 copy's ``amin``;
    all negative: both from the bits, in reverse. A NaN of either sign, and ±Inf, are found in
    either kind of block; +0 and -0 are both zeros."""
    mixed = values(31) - 1.25
    mixed[5], mixed[6] = 0.0, -0.0
    negative = -values(32)
    if special is not None:
        mixed[700] = special
        negative[300] = special if math.isnan(special) or special < 0 else -special
    t = blocks_of([values(33), mixed, negative, mixed], dtype)
    got = stats(t)
    assert_matches(got, reference(t), 2e-5)
    assert got["zeros"] == zeros_of(t)


def test_half_floats_read_their_bits_and_only_the_minimum_of_the_copy(small_blocks, monkeypatch):
    """A bfloat16 block of both signs costs one int16 ``aminmax`` and one float32 ``amin``; never
    the float ``aminmax`` (about 2.5x the ``amin``)."""
    seen = []
    aminmax, amin = torch.aminmax, torch.amin
    monkeypatch.setattr(torch, "aminmax", lambda x, *a, **k: seen.append(("aminmax", x.dtype)) or aminmax(x, *a, **k))
    monkeypatch.setattr(torch, "amin", lambda x, *a, **k: seen.append(("amin", x.dtype)) or amin(x, *a, **k))
    t = blocks_of([values(34) - 1.25, values(35), -values(36)], torch.bfloat16)
    got = stats(t)
    assert seen == [
        ("aminmax", torch.int16),
        ("amin", torch.float32),
        ("aminmax", torch.int16),
        ("aminmax", torch.int16),
    ]
    assert got["min"] == float(t.min()) and got["max"] == float(t.max())


WHOLE = float_pass.ROW  # a block of whole rows and whole bool lanes: the lean path's size


@pytest.fixture
def whole_blocks(monkeypatch):
    """Blocks of ``WHOLE`` values of the dtype asked for (``whole_blocks(dtype)``), and a count
    of the blocks read by the lean path (``_Reader._lean``)."""
    monkeypatch.setattr(raw_pass, "PRECISE_BELOW", 0)
    lean = []
    original = float_pass._Reader._lean

    def counted(self, block, n):
        lean.append(n)
        return original(self, block, n)

    monkeypatch.setattr(float_pass._Reader, "_lean", counted)

    def sized(dtype):
        itemsize = torch.empty(0, dtype=dtype).element_size()
        monkeypatch.setattr(tensor_stats, "BLOCK_CPU", WHOLE * itemsize // float_pass.bytes_per_element())
        assert float_pass.block(tensor_stats.BLOCK_CPU, {"work": dtype}) == WHOLE
        return lean

    return sized


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_whole_blocks_of_every_sign_pattern_stay_exact_on_the_lean_path(whole_blocks, dtype):
    lean = whole_blocks(dtype)
    relu = values(21, WHOLE).clone()
    relu[::3] = 0.0  # min exactly +0: zeros counted on the integer view
    mixed = values(22, WHOLE) - 1.25
    mixed[10] = 0.0
    mixed[11] = -0.0
    negative = -values(23, WHOLE)  # the range excludes 0: no zeros to count
    positive = values(24, WHOLE)
    ragged = values(25, 1000) - 1.25  # the last block is short: the general path
    pieces = [positive, relu, mixed, negative, relu, mixed, positive, ragged]
    t = blocks_of(pieces, dtype)
    got = stats(t)
    assert lean == [WHOLE] * 7
    assert got["zeros"] == zeros_of(t) and got["count"] == t.numel()
    assert got["min"] == float(t.min()) and got["max"] == float(t.max())
    assert_matches(got, reference(t), 2e-5 if dtype != torch.float64 else 1e-9)


@pytest.mark.parametrize("special", [math.nan, math.inf, -math.inf])
def test_a_non_finite_value_in_a_whole_block_is_found(whole_blocks, special):
    lean = whole_blocks(torch.float32)
    bad = values(26, WHOLE) - 1.25
    bad[100] = special
    t = blocks_of([values(27, WHOLE), bad, values(28, WHOLE)], torch.float32)
    got = stats(t)
    assert lean == [WHOLE] * 3
    assert_matches(got, reference(t), 2e-5)
    assert got["count"] == t.numel() - 1  # the count is of finite values
