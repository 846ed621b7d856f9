"""Exact value statistics of a dense torch tensor, at memory speed, changing nothing.

Fast path: each bounded block is read for ``aminmax``, then once more (still in cache) for the
sum and the sum of squares of ``x - c``, where ``c`` is one shift for the whole tensor, the mean
of a few hundred evenly spaced elements. Four passes over a block, but only the first comes from
memory, and each op is one parallel region: on a busy machine the regions, not the bytes, cost.
NaN and Inf propagate through ``aminmax``, so finite extremes prove a block is clean and nothing
is counted. Only when they are not is that block read again carefully, counting NaN/+Inf/-Inf and
taking the statistics of its finite values.

Precision: the squares are summed about ``c``, so their rounding is relative to
``m2 + n (mean - c)²``. When the sample was unrepresentative (``c`` more than 4σ from the mean,
which the sums themselves reveal), the blocks are read once more about the true mean. The sums of
``x - c`` also repair the rounding of ``c`` (the "corrected two-pass" algorithm), so precision holds
even when the mean dwarfs the spread (``1000 + noise`` in f32).

All reductions run on the tensor's own device; per-block partials are stacked there and come to
the host once, as a small table of scalars. Call under ``torch.no_grad()``.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from .blocks import collapse_expanded, iter_blocks
from .moments import Row, combine, repeat

# Elements per block: big enough that per-block overhead (Python, one parallel region per op)
# vanishes, small enough that a block and the scratch buffer stay in the last-level cache between
# the first read and the next ones (2**21 f32 = 8 MiB each; measured best of 2**20..2**23 on a
# 32 MiB-L3 EPYC). Below 2**24 so that counts carried in float32 stay exact.
BLOCK_CPU = 1 << 21
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
    """
    torch = _torch()
    base, multiplicity = collapse_expanded(t)
    if t.dtype == torch.bool:
        return _bool_stats(base, multiplicity, implicit_zeros)
    convert, work_dtype = _converter(t)
    limit = BLOCK_CPU if t.device.type == "cpu" else BLOCK_DEVICE
    # A sparse tensor may store no values at all: then only its implicit zeros count.
    rows: List[Row] = list(_rows(base, convert, work_dtype, limit)) if base.numel() else []
    rows = [repeat(row, multiplicity) for row in rows]
    if implicit_zeros:
        rows.append((implicit_zeros, 0.0, 0.0, 0.0, 0.0, 0, 0, 0))
    out = combine(rows)
    if t.dtype.is_complex:
        out["of"] = "abs"
    _exact_int_extremes(base, out, implicit_zeros)
    out["exact"] = True
    return out


def _bool_stats(base: Any, multiplicity: int, implicit_zeros: int) -> Dict[str, object]:
    true = int(base.sum().item()) * multiplicity
    count = base.numel() * multiplicity + implicit_zeros
    return {"count": count, "true": true, "nan": 0, "posinf": 0, "neginf": 0, "exact": True}


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
        wanted = set(dirty)
        careful = [_careful_block(torch, convert(b)) for i, b in enumerate(iter_blocks(base, limit)) if i in wanted]
        for i, row in zip(dirty, _to_host(torch.stack(careful).tolist())):
            rows[i] = row
    return rows


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

    One device->host transfer: the ``[blocks, 4]`` table and ``c`` travel together.
    """
    parts, counts = [], []
    for b in iter_blocks(base, limit):
        block = convert(b)
        counts.append(block.numel())
        parts.append(_fast_block(torch, block, scratch, shift))
    flat = torch.cat([torch.stack(parts).reshape(-1), shift.reshape(1)]).tolist()
    c = flat.pop()
    rows, fast = [], []
    for i, n in enumerate(counts):
        drift, squares, low, high = flat[4 * i : 4 * i + 4]
        rows.append(_host_row(n, c, drift, squares, low, high, 0.0, 0.0, 0.0))
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


def _host_row(n, centre, drift, squares, low, high, nan, posinf, neginf) -> Tuple[float, ...]:
    """The float64 arithmetic on the host for a row ``(n, c, drift, squares, min, max, ...)``.

    ``drift`` and ``squares`` are the sum and the sum of squares of ``x - c``, with ``c`` in the
    block's dtype. The drift repairs the rounding of ``c`` (the "corrected two-pass" algorithm),
    so precision holds even when the mean dwarfs the spread (``1000 + noise`` in f32).
    """
    total = centre * n + drift
    m2 = squares - drift * drift / n if n else 0.0
    return (n, total, m2, low, high, nan, posinf, neginf)


def _fast_block(torch, block, scratch, shift):
    """``[drift, squares, min, max]`` about ``shift``: four ops, one read from memory."""
    low, high = torch.aminmax(block)
    centred = scratch[: block.numel()].view(block.shape)
    torch.sub(block, shift, out=centred)
    drift = centred.sum()
    squares = centred.mul_(centred).sum()
    return torch.stack([drift, squares, low, high])


def _careful_block(torch, block):
    """Counts of NaN/+Inf/-Inf, and the statistics of the finite values only."""
    finite = torch.isfinite(block)
    n = finite.sum()
    posinf = (block == math.inf).sum()
    neginf = (block == -math.inf).sum()
    nan = block.numel() - n - posinf - neginf
    mean = (torch.where(finite, block, 0.0).sum() / n.clamp(min=1)).to(block.dtype)
    # Non-finite slots take the mean: it lies inside [min, max] and deviates by zero.
    filled = torch.where(finite, block, mean)
    low, high = torch.aminmax(filled)
    filled.sub_(mean)
    drift = filled.sum()
    squares = filled.mul_(filled).sum()
    # Counts travel in the block's float dtype: exact, since a block holds < 2**24 elements.
    return torch.stack([v.to(block.dtype) for v in (n, mean, drift, squares, low, high, nan, posinf, neginf)])


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
