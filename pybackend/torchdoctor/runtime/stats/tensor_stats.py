"""Exact value statistics of a dense torch tensor, at memory speed, changing nothing.

The tensor is read in memory order (a transposed or permuted view is permuted back to its
storage order: min, max, mean and std do not depend on order), in bounded blocks.

First pass: floats on the CPU (:mod:`float_pass`): per block of 1-4 MiB (:mod:`cpu_cache`), the extremes (of the
integer view of the bits where no sign bit is set: ReLU outputs; half floats on their own bits),
the sum, row norms for the squares and, where the range holds 0, the exact zeros; four reads of a
block in all, three of them from the core's cache. On the CPU the blocks are shared among the
threads the load leaves idle, torch itself on one thread (:mod:`parallel`, :mod:`guard`).
Other dtypes with kernels of their own, and floats on devices (:mod:`raw_pass`): per block
one ``aminmax`` in the tensor's own dtype, then the sum and the squares of the block while it is
in cache, and the zeros where the block's range holds 0. Integers keep exact extremes and, up to
2**53, exact sums. uint8/int8 on the CPU take :mod:`byte_stats` instead (int8 dot products by
``torch._int_mm`` where the CPU has VNNI/AMX, else one ``bincount`` per block; every figure exact).
NaN and Inf propagate through ``aminmax``, so finite extremes prove a block
clean; only the blocks whose extremes are not finite are read again carefully (NaN/+Inf/-Inf
counted, statistics of the finite values).

Precision: the sums are about 0. When they show that the mean dwarfs the spread (the squares
exceed ``m2`` ``ILL_CONDITIONED`` times: ``1000 + noise``), the blocks are read once more about
that mean (``_fast_rows``: the "corrected two-pass" algorithm), which restores full precision.
Complex, quantized and float8 tensors take that second algorithm directly, about a sampled shift.

All reductions run on the tensor's own device; per-block partials are stacked there and come to
the host once, as a small table of scalars. Runs under ``torch.no_grad()`` of its own.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import byte_stats, float_pass, raw_pass
from .blocks import collapse_expanded, iter_blocks, memory_order
from .guard import block_workers, cpu_threads, quiet
from .moments import EXACT_IN_FLOAT64, combine, moments_overflowed, peak_exponent, repeat, scaled_back, shifted_back
from .parallel import map_blocks
from .raw_pass import direct_rows, plan, raw_rows

# Elements per block: big enough that per-block overhead (Python, a few ops) stays small, small
# enough that a block and its float scratch stay in the per-core cache between the first read and
# the next ones (2**18 f32 = 1 MiB; on a loaded 2-core EPYC 2**18 beat 2**16..2**21, the shared
# L3 being other processes' too). Below 2**24 so that counts carried in float32 stay exact.
# The CPU float pass scales it to its own block (``float_pass.block``, 1-4 MiB by the CPU caches).
BLOCK_CPU = 1 << 18
BLOCK_DEVICE = 1 << 22

# Integer dtypes whose min/max torch reduces natively (exact, no float rounding).
_NATIVE_INT_MINMAX = {"int8", "int16", "int32", "int64", "uint8"}


class UnsupportedDtype(Exception):
    """The dtype has no arithmetic kernels in this build (bits*, int1..7, float4...)."""


def _torch():
    return sys.modules["torch"]


def dtype_name(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def value_stats(t: Any, implicit_zeros: int = 0) -> Dict[str, object]:
    """Statistics of all values of ``t`` (plus ``implicit_zeros`` zeros, for sparse tensors).

    Complex tensors are described by their magnitudes; bool tensors by how many are True.
    ``zeros`` counts the values exactly equal to 0 (implicit zeros included).
    """
    torch = _torch()
    with quiet(), torch.no_grad(), cpu_threads(torch, t):
        # A view of a tensor that requires grad requires grad too, even under no_grad: read a
        # detached alias (same memory, no history, no version bump) so no view of ours does.
        source = t.detach() if t.requires_grad else t
        if t.is_quantized and t.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            source = _per_channel_floats(torch, source)  # before any reshape: scales follow the channels
        base, multiplicity = collapse_expanded(source)
        base = memory_order(base)
        if t.dtype == torch.bool:
            return _bool_stats(torch, base, multiplicity, implicit_zeros)
        limit = BLOCK_CPU if t.device.type == "cpu" else BLOCK_DEVICE
        rows, exact = _all_rows(torch, t, base, limit) if base.numel() else ([], None)
        rows = [tuple(repeat(row, multiplicity)) for row in rows]
        if implicit_zeros:
            rows.append((implicit_zeros, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, implicit_zeros))
        out = combine(rows)
        if moments_overflowed(out):
            _rescaled_moments(t, base, limit, (multiplicity, implicit_zeros), out)
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            out.pop("zeros", None)  # integers: 0 is an ordinary value, not counted
        if t.dtype.is_complex:
            out["of"] = "abs"
        if exact is not None:
            low, high = exact
            if implicit_zeros:
                low, high = min(low, 0), max(high, 0)
            out["min"], out["max"] = low, high
        elif not (t.dtype.is_floating_point or t.dtype.is_complex or t.is_quantized):
            _exact_int_extremes(base, out, implicit_zeros)
        if not (t.dtype.is_floating_point or t.dtype.is_complex or t.is_quantized):
            _wide_int_moments(base, limit, (multiplicity, implicit_zeros), out)
        out["exact"] = True
        return out


def _rescaled_moments(t: Any, base: Any, limit: int, extra: Tuple[int, int], out: Dict[str, object]) -> None:
    """Mean and std read again from blocks scaled by a power of two that brings the largest
    magnitude near 1, then scaled back. Rare, so the general block path is fine."""
    exponent = peak_exponent(out)
    convert, work = _converter(t)
    scale = math.ldexp(1.0, -exponent)
    scaled_back(_moments_again(base, limit, extra, lambda b: convert(b).mul(scale), work, 0.0), exponent, out)


def _wide_int_moments(base: Any, limit: int, extra: Tuple[int, int], out: Dict[str, object]) -> None:
    """64-bit integers beyond 2**53 whose spread is not: the moments of ``x - min``, taken in
    the integers (exact) before the float64 conversion, so the std is not rounding noise. The
    difference is taken on the int64 bits (uint64 has no subtraction): it wraps modulo 2**64,
    which gives ``x - min`` exactly as long as the spread is below 2**63."""
    low, high = out["min"], out["max"]
    if not (isinstance(low, int) and isinstance(high, int)) or base.element_size() != 8:
        return
    if max(-low, high) <= EXACT_IN_FLOAT64 or high - low >= 1 << 63:
        return
    torch = _torch()
    origin = torch.tensor(low - (1 << 64) if low >= 1 << 63 else low, dtype=torch.int64, device=base.device)

    def convert(b: Any) -> Any:
        return (b.view(torch.int64) - origin).to(torch.float64)

    shifted_back(_moments_again(base, limit, extra, convert, torch.float64, float(-low)), low, out)


def _moments_again(base: Any, limit: int, extra: Tuple[int, int], convert, work, zero: float) -> Dict[str, object]:
    """``combine`` of the blocks of ``base`` read through ``convert``; ``extra``: an expanded
    view's repeats and a sparse tensor's implicit zeros, which ``convert`` turns into ``zero``."""
    multiplicity, implicit_zeros = extra
    rows = [tuple(repeat(row, multiplicity)) for row in _rows(base, convert, work, limit)]
    if implicit_zeros:
        rows.append((implicit_zeros, zero * implicit_zeros, 0.0, zero, zero, 0, 0, 0, 0))
    return combine(rows)


def _bool_stats(torch, base: Any, multiplicity: int, implicit_zeros: int) -> Dict[str, object]:
    """True counted by ``count_nonzero`` (one read of a byte each; a sum widens every byte)."""
    parts = [torch.count_nonzero(b) for b in iter_blocks(base, BLOCK_DEVICE * 8)]
    true = int(torch.stack(parts).sum().item()) * multiplicity if parts else 0
    count = base.numel() * multiplicity + implicit_zeros
    return {"count": count, "true": true, "zeros": count - true, "nan": 0, "posinf": 0, "neginf": 0, "exact": True}


def _all_rows(torch, t: Any, base: Any, limit: int) -> Tuple[List[Tuple[Any, ...]], Optional[Tuple]]:
    """Block rows ``(n, sum, m2, min, max, nan, +inf, -inf, zeros)`` and exact integer extremes."""
    how = plan(torch, base)
    if how is None:
        convert, work_dtype = _converter(t)
        return _rows(base, convert, work_dtype, limit), None
    if base.numel() <= limit and base.numel() < raw_pass.PRECISE_BELOW:
        return _direct(torch, base, how)
    if byte_stats.applies(torch, base):
        return byte_stats.byte_rows(torch, base)  # 8-bit integers: exact integer sums
    general = limit
    raw, exact, limit = _first_pass(torch, base, how, general)
    if how["work"] != torch.float64 and base.device.type != "mps" and _overflowed(raw):
        how = dict(how, work=torch.float64)  # |x| ~ 1e18: float32 squares overflow; not in float64
        raw, exact, limit = _first_pass(torch, base, how, general)
    work = how["work"]
    convert = (lambda b: b) if base.dtype == work else (lambda b: b.to(work))
    clean = [i for i, row in enumerate(raw) if math.isfinite(row[3]) and math.isfinite(row[4])]
    rows: List[Tuple[Any, ...]] = [(n, s, q - s * s / n, lo, hi, 0, 0, 0, z) for n, s, q, lo, hi, z in raw]
    better = None if _constant(raw, clean) else _better_shift([(raw[i][0], 0.0, raw[i][1], raw[i][2]) for i in clean])
    if better is not None:  # the mean dwarfs the spread: sum the squares about the mean instead
        scratch = torch.empty(min(limit, base.numel()), dtype=work, device=base.device)
        shift = torch.tensor(better, dtype=work, device=base.device)
        shifted, _ = _fast_rows(torch, base, convert, scratch, shift, limit)
        for i in clean:
            rows[i] = shifted[i][:8] + (raw[i][5],)
    for i in clean:
        if rows[i][0] and _same(rows[i][3], rows[i][4]):
            rows[i] = rows[i][:2] + (0.0,) + rows[i][3:]  # a constant block: no rounding noise in m2
    finite = set(clean)
    dirty = [i for i in range(len(raw)) if i not in finite]
    if dirty:
        for i, row in zip(dirty, _careful_rows(torch, base, convert, limit, dirty)):
            rows[i] = row
    return rows, exact


def _first_pass(torch, base: Any, how: Dict[str, Any], limit: int):
    """``(rows, exact, block)``: floats on the CPU read each block fewer times, in bigger blocks
    (:mod:`float_pass`), the rest by :func:`raw_rows`. Later passes must use the same ``block``:
    they replace rows by index."""
    if float_pass.applies(torch, base, how):
        block = float_pass.block(limit, how)
        rows, exact = float_pass.float_rows(torch, base, how, block)
        return rows, exact, block
    rows, exact = raw_rows(torch, base, how, limit)
    return rows, exact, limit


def _direct(torch, base: Any, how: Dict[str, Any]) -> Tuple[List[Tuple[Any, ...]], Optional[Tuple]]:
    """A small tensor in one go (:func:`raw_pass.direct_rows`); with NaN/Inf, read carefully."""
    rows, exact = direct_rows(torch, base, how)
    if rows:
        return rows, exact
    work = how["work"]
    convert = (lambda b: b) if base.dtype == work else (lambda b: b.to(work))
    return _careful_rows(torch, base, convert, base.numel(), [0]), exact


def _overflowed(raw: List[Tuple[float, ...]]) -> bool:
    """A block with finite extremes whose sums are not finite: the work dtype overflowed."""
    return any(
        math.isfinite(row[3]) and math.isfinite(row[4]) and not (math.isfinite(row[1]) and math.isfinite(row[2]))
        for row in raw
    )


def _same(low: float, high: float) -> bool:
    return low == high


def _constant(raw: List[Tuple[float, ...]], clean: List[int]) -> bool:
    """Every clean block holds one and the same value: m2 is exactly 0, no second pass."""
    values = {raw[i][3] for i in clean} | {raw[i][4] for i in clean}
    return len(values) == 1


# Per-channel quantized tensors are read as one float32 copy (their blocks of the flattened tensor
# no longer match the channels' scales); past this many elements (256 MiB of floats) they are not.
PER_CHANNEL_LIMIT = 1 << 26


def _per_channel_floats(torch, base: Any) -> Any:
    """The float32 values of a per-channel quantized tensor (weights: small next to activations)."""
    if base.numel() > PER_CHANNEL_LIMIT:
        raise UnsupportedDtype(f"per-channel quantized, over {PER_CHANNEL_LIMIT:,} values")
    return base.dequantize()


def _converter(t: Any) -> Tuple[Callable[[Any], Any], Any]:
    """How to turn a block into floats we can reduce, and which float dtype that gives."""
    torch = _torch()
    name = dtype_name(t)
    wide = torch.float32 if t.device.type == "mps" else torch.float64  # MPS has no float64
    if t.is_quantized:
        return (lambda b: b.dequantize()), torch.float32
    if name in ("float32", "float64"):
        return (lambda b: b), t.dtype
    if name == "complex32":
        return (lambda b: b.to(torch.complex64).abs()), torch.float32
    if name == "complex64":
        return (lambda b: b.abs()), torch.float32
    if name == "complex128":
        return (lambda b: b.abs()), wide
    if t.dtype.is_floating_point and _converts(t, torch.float32):
        return (lambda b: b.to(torch.float32)), torch.float32  # f16, bf16, float8 variants
    if _converts(t, wide):
        return (lambda b: b.to(wide)), wide  # integers: exact in float64 up to 2**53
    raise UnsupportedDtype(name)


def _converts(t: Any, dtype: Any) -> bool:
    if t.numel() == 0:
        return True  # nothing to convert (a sparse tensor that stores no values)
    try:
        t[(0,) * t.dim()].to(dtype).sum()  # one element: probes the kernels, copies nothing big
        return True
    except Exception:
        return False


# Elements sampled (evenly spaced, deterministic) to pick the shift ``c``.
SHIFT_SAMPLE = 256
# Redo the pass about the true mean when the squares about ``c`` exceed m2 this many times
# (``c`` more than ~4σ away from the mean: up to 1.2 digits of the sum of squares lost).
ILL_CONDITIONED = 16.0


def _rows(base: Any, convert, work_dtype, limit: int) -> List[Tuple[float, ...]]:
    """Per-block partials ``(n, sum, m2, min, max, nan, +inf, -inf)`` as host floats.

    Every block takes the fast path; the few whose extremes come back non-finite are read again
    carefully, so one NaN in a 10**8-element tensor costs one extra block, not a second pass.
    """
    torch = _torch()
    scratch = torch.empty(min(limit, base.numel()), dtype=work_dtype, device=base.device)
    shift = _shift(torch, base, convert, work_dtype)
    rows, fast = _fast_rows(torch, base, convert, scratch, shift, limit)
    better = _better_shift(fast)
    if better is not None:
        retry = torch.tensor(better, dtype=work_dtype, device=base.device)
        if float(retry.item()) != fast[0][1]:  # rounded to the dtype, it may be ``c`` again
            rows, _ = _fast_rows(torch, base, convert, scratch, retry, limit)
    dirty = [i for i, row in enumerate(rows) if not (math.isfinite(row[3]) and math.isfinite(row[4]))]
    if dirty:
        for i, row in zip(dirty, _careful_rows(torch, base, convert, limit, dirty)):
            rows[i] = row
    return rows


def _careful_rows(torch, base: Any, convert, limit: int, dirty: List[int]) -> List[Tuple[float, ...]]:
    """The careful rows of the blocks numbered ``dirty`` (those with NaN/Inf), one transfer."""
    wanted = set(dirty)
    careful = [_careful_block(torch, convert(b)) for i, b in enumerate(iter_blocks(base, limit)) if i in wanted]
    return _to_host(torch.stack(careful).tolist())


def _shift(torch, base: Any, convert, work_dtype) -> Any:
    """A 0-d ``c`` near the mean: the average of an evenly spaced sample, non-finite values as 0.

    A handful of tiny ops on the device, no host round trip. Each value is divided by the sample
    size before summing, so ``c`` is finite whatever the data; any finite ``c`` gives exact results
    (a poor one only costs the second pass of ``_rows``).
    """
    count = base.numel()
    k = max(min(SHIFT_SAMPLE, count), 1)
    step = max((count - 1) // (k - 1), 1) if k > 1 else 1
    try:
        index = torch.arange(0, k * step, step, dtype=torch.long, device=base.device)
        sample = convert(torch.take(base, index)).to(work_dtype)
    except Exception:  # e.g. no ``take`` for this tensor type
        return torch.zeros((), dtype=work_dtype, device=base.device)
    return torch.nan_to_num(sample, nan=0.0, posinf=0.0, neginf=0.0).div_(k).sum()


def _fast_rows(torch, base: Any, convert, scratch, shift, limit: int):
    """``(rows, fast)``: host rows of every block, and ``(n, c, drift, squares)`` of the clean ones.

    One device->host transfer: the ``[blocks, 5]`` table and ``c`` travel together.
    """
    spare = [scratch]  # the first reader takes the caller's buffer, any other one its own

    def make_reader():
        own = spare.pop() if spare else torch.empty_like(scratch)
        return lambda b: (b.numel(), _fast_block(torch, convert(b), own, shift))

    workers = block_workers(base, limit)
    found = map_blocks(iter_blocks(base, limit), make_reader, workers)
    counts, parts = [n for n, _ in found], [part for _, part in found]
    flat = torch.cat([torch.stack(parts).reshape(-1), shift.reshape(1)]).tolist()
    c = flat.pop()
    rows, fast = [], []
    for i, n in enumerate(counts):
        drift, squares, low, high, zeros = flat[5 * i : 5 * i + 5]
        rows.append(_host_row(n, c, drift, squares, low, high, 0.0, 0.0, 0.0, zeros))
        if math.isfinite(low) and math.isfinite(high):
            fast.append((n, c, drift, squares))
    return rows, fast


def _better_shift(fast: List[Tuple[float, ...]]) -> Optional[float]:
    """The mean of the clean blocks, when the sums about ``c`` lost too much to cancellation."""
    n = sum(row[0] for row in fast)
    if not n:
        return None
    c = fast[0][1]
    drift = sum(row[2] for row in fast)
    squares = sum(row[3] for row in fast)
    m2 = squares - drift * drift / n
    if not (math.isfinite(squares) and squares > 0) or m2 * ILL_CONDITIONED >= squares:
        return None
    mean = c + drift / n
    return mean if math.isfinite(mean) and mean != c else None


def _to_host(table: List[List[float]]) -> List[Tuple[float, ...]]:
    return [_host_row(*row) for row in table]


def _host_row(n, centre, drift, squares, low, high, nan, posinf, neginf, zeros=0.0) -> Tuple[float, ...]:
    """The float64 arithmetic on the host for a row ``(n, c, drift, squares, min, max, ...)``.

    ``drift`` and ``squares`` are the sum and the sum of squares of ``x - c``, with ``c`` in the
    block's dtype. The drift repairs the rounding of ``c`` (the "corrected two-pass" algorithm),
    so precision holds even when the mean dwarfs the spread (``1000 + noise`` in f32).
    """
    total = centre * n + drift
    m2 = squares - drift * drift / n if n else 0.0
    return (n, total, m2, low, high, nan, posinf, neginf, zeros)


def _fast_block(torch, block, scratch, shift):
    """``[drift, squares, min, max, zeros]`` about ``shift``: one read from memory."""
    low, high = torch.aminmax(block)
    zeros = torch.count_nonzero(block == 0).to(block.dtype)
    centred = scratch[: block.numel()].view(block.shape)
    torch.sub(block, shift, out=centred)
    drift = centred.sum()
    squares = centred.mul_(centred).sum()
    return torch.stack([drift, squares, low, high, zeros])


def _careful_block(torch, block):
    """Counts of NaN/+Inf/-Inf, and the statistics of the finite values only."""
    finite = torch.isfinite(block)
    n = finite.sum()
    posinf = (block == math.inf).sum()
    neginf = (block == -math.inf).sum()
    nan = block.numel() - n - posinf - neginf
    zeros = (block == 0).sum()
    mean = (torch.where(finite, block, 0.0).sum() / n.clamp(min=1)).to(block.dtype)
    # Finite values summing past the float range (1e308 twice) give an infinite mean: the centre
    # is then the largest finite value (``combine``'s caller rescales the overflowed moments).
    top = torch.where(finite, block, -math.inf).amax()
    mean = torch.where(mean.isfinite(), mean, torch.where(top.isfinite(), top, 0.0))
    # Non-finite slots take the centre: it lies inside [min, max] and deviates by zero.
    filled = torch.where(finite, block, mean)
    low, high = torch.aminmax(filled)
    filled.sub_(mean)
    drift = filled.sum()
    squares = filled.mul_(filled).sum()
    # Counts travel in the block's float dtype: exact, since a block holds < 2**24 elements.
    return torch.stack([v.to(block.dtype) for v in (n, mean, drift, squares, low, high, nan, posinf, neginf, zeros)])


def _exact_int_extremes(base: Any, out: Dict[str, object], implicit_zeros: int) -> None:
    """Integers beyond 2**53 round in float64: take min/max from torch's own integer kernels."""
    name = dtype_name(base)
    if base.dtype.is_floating_point or base.dtype.is_complex or base.is_quantized:
        return
    if name in _NATIVE_INT_MINMAX and base.numel():
        low, high = (v.item() for v in _torch().aminmax(base))
    elif isinstance(out["min"], (int, float)) and isinstance(out["max"], (int, float)):
        low, high = int(out["min"]), int(out["max"])
    else:
        return
    if implicit_zeros:
        low, high = min(low, 0), max(high, 0)
    out["min"], out["max"] = int(low), int(high)


def host_values(t: Any) -> List[object]:
    """Python values of a small tensor (the caller bounds its size): one host transfer."""
    torch = _torch()
    if t.is_quantized:
        t = t.dequantize()
    elif t.dtype.is_floating_point and dtype_name(t) not in ("float16", "bfloat16", "float32", "float64"):
        t = t.to(torch.float32)  # float8 and friends have no tolist()
    elif dtype_name(t) == "complex32":
        t = t.to(torch.complex64)
    return t.reshape(-1).tolist()
