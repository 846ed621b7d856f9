"""8-bit integers read by int8 dot products (where int8 products are fast and exact) or by their
histogram: both exact against Python integer arithmetic, every layout, every edge."""

import math
import warnings
from fractions import Fraction

import pytest
import torch

from torchdoctor.runtime.stats import byte_stats, guard, raw_pass
from torchdoctor.runtime.stats.tensor_stats import value_stats

pytestmark = pytest.mark.filterwarnings("error")

BIG = raw_pass.PRECISE_BELOW + 4_321  # past the small-tensor path: the byte pass is used
DOT = byte_stats.dot_applies(torch)  # this machine multiplies int8 fast and exactly
DOT_BLOCK = byte_stats.CHUNKS * 256  # bytes per dot block with K patched to 256


@pytest.fixture(params=["dot", "histogram"], autouse=True)
def path(request, monkeypatch):
    """Every test runs on both paths (the dot one only where this CPU has VNNI/AMX)."""
    if request.param == "dot" and not DOT:
        pytest.skip("no fast exact int8 products on this CPU")
    monkeypatch.setattr(byte_stats, "_exact_products", request.param == "dot")
    return request.param


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
    monkeypatch.setattr(byte_stats, "K", 256)  # dot blocks of CHUNKS * 256 bytes, a ragged last one
    t = make(dtype, BIG, seed=2)
    info = torch.iinfo(dtype)
    t[0], t[-1], t[BIG // 2] = info.min, info.max, 0
    check(t)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
@pytest.mark.parametrize("start", [0, 1, 8])
def test_whole_blocks_of_every_kind_stay_exact(dtype, start, monkeypatch, path):
    """Whole dot blocks read each way: a contiguous run aligned to 8 bytes (uint8 flipped a word at
    a time), one that is not, and a 1-D strided run (gathered byte by byte); int8 copied as is."""
    monkeypatch.setattr(byte_stats, "K", 256)
    t = make(dtype, 6 * DOT_BLOCK + start, seed=start)
    info = torch.iinfo(dtype)
    t[start], t[-1] = info.min, info.max
    sums = byte_stats.dot_sums if path == "dot" else byte_stats.histogram_sums  # no fallback to hide an error
    for view in (t[start:], t[start::2]):
        values = [int(v) for v in view.tolist()]
        expected = (len(values), sum(values), sum(v * v for v in values), min(values), max(values))
        assert sums(torch, view) == expected


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_a_reader_stops_reading_extremes_once_a_block_held_both_limits(dtype, monkeypatch):
    """Blocks after one holding the dtype's min and max cannot change the extremes: not read."""
    if not DOT:
        pytest.skip("no fast exact int8 products on this CPU")
    monkeypatch.setattr(byte_stats, "K", 256)
    info = torch.iinfo(dtype)
    blocks = make(dtype, 4 * DOT_BLOCK, seed=9).view(4, DOT_BLOCK).clamp(info.min + 1, info.max - 1)
    blocks[1, 5], blocks[2, 5], blocks[2, 9] = info.min, info.min, info.max  # both limits in one block: the third
    reader = byte_stats._DotReader(torch, flip=dtype == torch.uint8)
    calls = []
    real = reader.aminmax
    reader.aminmax = lambda *a, **k: (calls.append(1), real(*a, **k))[1]
    found = [reader.read(b)[2:] for b in blocks]
    shift = 128 if dtype == torch.uint8 else 0  # the reader sees uint8 as int8 (x - 128)
    expected = [(int(b.min()) - shift, int(b.max()) - shift) for b in blocks[:3]]
    assert found == expected + [(-128, 127)] and len(calls) == 3


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_a_constant_tensor_has_std_exactly_zero(dtype):
    got = value_stats(torch.full((BIG,), -7 if dtype == torch.int8 else 200, dtype=dtype))
    assert got["std"] == 0.0 and got["min"] == got["max"] == got["mean"]


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_the_extremes_everywhere_stay_exact(dtype):
    """All -128 (uint8: all 0) or all 127: the largest squares. A run of -128 sums its squares to
    K * 128**2, past 2**31: the int32 product wraps, and is read back as unsigned."""
    info = torch.iinfo(dtype)
    for value in (info.min, info.max):
        check(torch.full((2 * byte_stats.K * byte_stats.CHUNKS + 7,), value, dtype=dtype))
    half = torch.full((BIG,), info.min, dtype=dtype)
    half[1::2] = info.max
    check(half)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
@pytest.mark.parametrize("n", [1, 2, 7, 255, 257, DOT_BLOCK - 1, DOT_BLOCK, DOT_BLOCK + 1, 2 * DOT_BLOCK])
def test_the_byte_pass_itself_on_small_and_ragged_tensors(dtype, n, monkeypatch):
    """Straight to ``byte_rows`` (``value_stats`` reads small tensors another way)."""
    monkeypatch.setattr(byte_stats, "K", 256)
    t = make(dtype, n, seed=n)
    rows, extremes = byte_stats.byte_rows(torch, t)
    values = [int(v) for v in t.tolist()]
    count, low, high = len(values), min(values), max(values)
    m2 = Fraction(count * sum(v * v for v in values) - sum(values) ** 2, count)
    assert extremes == (low, high) and rows[0][0] == count and rows[0][1] == sum(values)
    assert rows[0][2] == float(m2) and rows[0][3:5] == (low, high)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_zero_d_empty_and_non_contiguous_views(dtype):
    t = make(dtype, 3 * BIG, seed=5).view(3, BIG)
    check(t[:, 1::2])  # rows of a strided view
    check(t.t()[7:])  # transposed, then a slice
    assert value_stats(torch.tensor(200 if dtype == torch.uint8 else -5, dtype=dtype))["count"] == 1
    empty = value_stats(torch.empty(0, BIG, dtype=dtype))
    assert empty["count"] == 0 and empty["mean"] is None


def test_a_product_that_saturates_is_caught_by_the_probe(monkeypatch, path):
    """A kernel that saturates (pre-VNNI ``vpmaddubsw`` pairs do) must send us to the histogram:
    the probe multiplies the extreme values and compares with int64."""
    real = torch._int_mm

    def saturating(a, b, out):
        return out.copy_(real(a, b).clamp(-(2**15), 2**15 - 1))

    monkeypatch.setattr(torch, "_int_mm", saturating)
    assert not byte_stats._products_exact(torch)
    monkeypatch.setattr(torch, "_int_mm", real)
    assert byte_stats._products_exact(torch) is DOT or not byte_stats._fast_int8(torch)


def test_a_product_that_refuses_the_real_shape_is_caught_by_the_probe(monkeypatch):
    """The probe multiplies through a real reader, at the real ``[2, K]`` shape: a kernel that takes
    a small product but raises on the real one sends us to the histogram."""
    real = torch._int_mm

    def small_only(a, b, out):
        if a.shape[1] > 256:
            raise RuntimeError("shape unsupported")
        return real(a, b, out=out)

    monkeypatch.setattr(torch, "_int_mm", small_only)
    assert not byte_stats._products_exact(torch)


def test_a_product_that_ignores_the_row_stride_is_caught_by_the_probe(monkeypatch):
    """A reader's ``[2, K]`` matrix is a run and the ones ``K * (CHUNKS - c)`` bytes after it (a
    strided view): a kernel that read it as if contiguous would multiply the next run instead."""
    real = torch._int_mm

    def contiguous_only(a, b, out):
        return real(a.as_strided(a.shape, (a.shape[1], 1)), b, out=out)

    monkeypatch.setattr(torch, "_int_mm", contiguous_only)
    assert not byte_stats._products_exact(torch)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_a_dot_pass_that_raises_falls_back_to_the_histogram(dtype, monkeypatch):
    """Past the probe, a raising dot pass must still give exact statistics, and later calls
    skip the dot path."""

    def boom(a, b, out):
        raise RuntimeError("_int_mm_out_cpu not implemented")

    monkeypatch.setattr(byte_stats, "_exact_products", True)
    monkeypatch.setattr(torch, "_int_mm", boom)
    t = make(dtype, BIG)
    check(t)
    assert byte_stats._exact_products is False
    check(t)


def test_only_cpu_8_bit_dense_tensors_take_the_histogram():
    assert byte_stats.applies(torch, torch.zeros(3, dtype=torch.uint8))
    assert byte_stats.applies(torch, torch.zeros(3, dtype=torch.int8))
    assert not byte_stats.applies(torch, torch.zeros(3, dtype=torch.int16))
    assert not byte_stats.applies(torch, torch.zeros(3, dtype=torch.uint8, device="meta"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated; still met in the wild
        q = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.quint8)
    assert not byte_stats.applies(torch, q)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
@pytest.mark.parametrize("start", [0, 3])  # aligned to 8 bytes (uint8 flipped a word at a time) or not
def test_blocks_shared_by_two_readers_stay_exact(dtype, start, monkeypatch, path):
    """On an idle machine the blocks go to two threads, each with its own reader (a dot buffer, or
    a counter)."""
    monkeypatch.setattr(guard, "idle_threads", lambda current, own=None: 2)
    monkeypatch.setattr(guard, "PARALLEL_FROM", 1)
    monkeypatch.setattr(byte_stats, "K", 256)  # dozens of blocks of CHUNKS * 256 bytes
    monkeypatch.setattr(byte_stats, "BLOCK", 4096)  # dozens of histogram blocks
    made = []
    reader = "_DotReader" if path == "dot" else "_counter"
    real = getattr(byte_stats, reader)
    monkeypatch.setattr(byte_stats, reader, lambda *a: (made.append(1), real(*a))[1])
    t = make(dtype, BIG + start, seed=5)[start:]
    info = torch.iinfo(dtype)
    t[0], t[-1] = info.min, info.max
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # readers are capped by torch's own count (an earlier test may leave 1)
    try:
        check(t)
    finally:
        torch.set_num_threads(before)
    assert len(made) == 2  # one buffer per reader
