"""Exact statistics of every kind of tensor, checked against a dense float64 reference."""

import math
import warnings
from contextlib import contextmanager

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from support.stats_reference import assert_matches, reference
from torchdoctor.runtime.stats import tensor_stats
from torchdoctor.runtime.summary.api import stats

pytestmark = pytest.mark.filterwarnings("error")

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
FLOAT8 = [
    getattr(torch, n)
    for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
    if hasattr(torch, n)
]
INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8] + [
    getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)
]
COMPLEX = [torch.complex64, torch.complex128]
ALL = FLOATS + FLOAT8 + INTS + COMPLEX + [torch.bool]

# How close mean/std must be, relative to the data's scale: f32 sums carry ~1e-7 relative error.
RTOL = {torch.float64: 1e-9, torch.complex128: 1e-9}
DEFAULT_RTOL = 2e-5


@contextmanager
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextmanager
def block_size(n):
    """Force many blocks on small tensors, so block combination is what gets tested."""
    old = tensor_stats.BLOCK_CPU
    tensor_stats.BLOCK_CPU = n
    try:
        yield
    finally:
        tensor_stats.BLOCK_CPU = old


def make(dtype, shape, seed, scale, offset, specials):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(shape, generator=g, dtype=torch.float64) * scale + offset
    if dtype.is_complex:
        base = torch.complex(base, torch.randn(shape, generator=g, dtype=torch.float64) * scale)
    flat = base.view(-1)
    for position, value in specials:
        if flat.numel() and (dtype.is_floating_point or dtype.is_complex):
            flat[position % flat.numel()] = value
    with quiet():
        if dtype == torch.bool:
            return base.real > offset if base.is_complex() else base > offset
        if not (dtype.is_floating_point or dtype.is_complex):
            info = torch.iinfo(dtype)
            return base.clamp(max(info.min, -1e15), min(info.max, 1e15)).to(dtype)
        return base.to(dtype)


def view_of(t, how):
    if how == "transpose" and t.dim() >= 2:
        return t.transpose(0, -1)
    if how == "step" and t.dim() >= 1:
        return t[::2]
    if how == "expand":
        return t.unsqueeze(0).expand(3, *t.shape)
    if how == "select" and t.dim() >= 2:
        return t[1 % t.shape[0]]
    return t


specials = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from([math.nan, math.inf, -math.inf])), max_size=3)


@settings(max_examples=150)
@given(
    dtype=st.sampled_from(ALL),
    shape=st.lists(st.integers(1, 6), min_size=0, max_size=4),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([1e-3, 1.0, 100.0]),
    offset=st.sampled_from([0.0, 3.0, 1000.0]),
    special=specials,
    how=st.sampled_from(["none", "transpose", "step", "expand", "select"]),
    blocks=st.sampled_from([None, 1, 5]),
)
def test_matches_float64_reference(dtype, shape, seed, scale, offset, special, how, blocks):
    t = view_of(make(dtype, shape, seed, scale, offset, special), how)
    with block_size(blocks or tensor_stats.BLOCK_CPU):
        got = stats(t)
    assert got["kind"] == "tensor", got
    assert_matches(got, reference(t), RTOL.get(dtype, DEFAULT_RTOL))


def test_big_tensor_takes_many_blocks_and_stays_exact():
    g = torch.Generator().manual_seed(1)
    t = torch.randn(3_000_000, generator=g) * 2 + 1000  # mean dwarfs spread: the hard case for E[x²]-E[x]²
    t[123_456] = math.nan
    t[2_999_999] = -math.inf
    assert_matches(stats(t), reference(t), 1e-6)


def test_expanded_to_a_huge_logical_size_costs_its_real_size():
    t = torch.arange(4.0).expand(10**11, 4)  # 4e11 logical elements, 16 bytes of data
    got = stats(t)
    assert got["count"] == 4 * 10**11 and got["mean"] == 1.5 and got["expanded"] == 10**11
    # population and sample std agree at n=4e11 (4 stored values: summed in float64)
    assert got["std"] == pytest.approx(math.sqrt(1.25), rel=1e-9)


def test_all_nan_and_all_inf():
    got = stats(torch.full((5,), math.nan))
    assert got["nan"] == 5 and got["count"] == 0 and got["mean"] is None and got["min"] is None
    got = stats(torch.tensor([math.inf, -math.inf]))
    assert (got["posinf"], got["neginf"], got["count"]) == (1, 1, 0)


def test_integers_beyond_2_53_keep_exact_extremes():
    t = torch.tensor([2**62 + 1, -(2**62) - 3, 5], dtype=torch.int64)
    got = stats(t)
    assert got["max"] == 2**62 + 1 and got["min"] == -(2**62) - 3


def test_bool_counts_true():
    got = stats(torch.tensor([True, False, True, True]))
    assert got["true"] == 3 and got["count"] == 4


def test_complex_is_described_by_magnitude():
    got = stats(torch.tensor([3 + 4j, 0j, complex(math.nan, 1)], dtype=torch.complex64))
    assert got["of"] == "abs" and got["max"] == 5 and got["min"] == 0 and got["nan"] == 1


def test_complex32_and_dtypes_without_kernels():
    with quiet():
        c32 = torch.tensor([3 + 4j, 1j], dtype=torch.complex64).to(torch.complex32)
    assert stats(c32)["max"] == 5
    if hasattr(torch, "float4_e2m1fn_x2"):
        packed = torch.zeros(4, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
        got = stats(packed)
        assert got["kind"] == "tensor" and got["note"].startswith("no arithmetic")


def test_zero_d_empty_and_meta():
    assert stats(torch.tensor(2.5))["value"] == 2.5
    assert stats(torch.empty(0, 3))["note"] == "empty"
    meta = stats(torch.empty(3, 4, device="meta"))
    assert meta["note"] == "no data (meta)" and meta["nbytes"] == 48 and meta["device"] == "meta"


def test_sparse_coo_counts_implicit_zeros_and_coalesces_duplicates():
    indices = torch.tensor([[0, 0, 2], [1, 1, 3]])
    with quiet():
        t = torch.sparse_coo_tensor(indices, torch.tensor([1.0, 2.0, math.nan]), (4, 5))  # (0,1) twice: 3.0
    got = stats(t)
    dense = t.to_dense()
    assert got["nnz"] == 3 and got["nan"] == 1 and got["count"] == 19 and got["max"] == 3.0 and got["min"] == 0.0
    finite = dense[torch.isfinite(dense)].double()
    assert got["mean"] == pytest.approx(finite.mean().item()) and got["std"] == pytest.approx(finite.std().item())
    assert not t.is_coalesced()  # ours was coalesced on the side


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr"])
def test_compressed_sparse_layouts(layout):
    dense = torch.zeros(4, 6)
    dense[1, 2], dense[3, 5] = 2.0, -1.0
    with quiet():
        t = {"csr": dense.to_sparse_csr, "csc": dense.to_sparse_csc, "bsr": lambda: dense.to_sparse_bsr((2, 2))}[
            layout
        ]()
    got = stats(t)
    assert_matches(got, reference(dense), 1e-9)
    assert got["layout"] == "sparse_" + layout


def test_nested_tensor_has_header_only():
    with quiet():
        t = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)])
    got = stats(t)
    assert got["shape"] == [2, None, None] and got["note"].startswith("nested")


def test_inference_tensors_work_without_a_version_counter():
    with torch.inference_mode():
        t = torch.arange(6.0)
    assert stats(t)["max"] == 5.0
