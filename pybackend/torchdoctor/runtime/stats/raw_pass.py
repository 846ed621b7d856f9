"""The first, and almost always the only, pass over a tensor's values.

Per block: ``aminmax`` on the block in its own dtype (exact for integers; float16/bfloat16 on
their exact float32 copy, their own kernel being the slow part), then the sum and the sum of
squares by rows of ``ROW`` elements (``sum(dim=1)`` and ``vector_norm(dim=1)``: two reads of a
block that is still in cache, nothing written), and for floats the count of exact zeros where
the block's range contains 0 (``sign`` and one norm). A block that is not already a contiguous float32/float64 run is first
copied into one scratch buffer (float32 for 8-bit integers, float16 and bfloat16, whose row sums
are then exact; float64 for wider integers), so nothing the size of the tensor is allocated.

The row results stay on the device and are folded into one small table per block at the end,
in float64; the table crosses to the host once. Sums are taken about 0 here: the caller checks
from the sums themselves whether the mean dwarfs the spread and, only then, reads the tensor
again about its mean (see :mod:`tensor_stats`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .blocks import iter_blocks

ROW = 1024  # elements per row sum: an 8-bit integer row sums exactly in float32 (< 2**24)
# Tensors this small are summed in float64 whatever their dtype: it costs nothing at this size
# and keeps their figures to float64 precision (float32 row norms round at ~1e-7).
PRECISE_BELOW = 1 << 16

# Unsigned dtypes without min/max kernels: compared through the signed view of the same width,
# with the sign bit flipped (an order-preserving map), so extremes stay exact.
_SIGNED_VIEW = {"uint16": ("int16", 1 << 15), "uint32": ("int32", 1 << 31), "uint64": ("int64", 1 << 63)}
_SMALL_INTS = {"uint8", "int8"}
_NATIVE_FLOATS = {"float32", "float64"}
_HALF_FLOATS = {"float16", "bfloat16"}


def plan(torch, t: Any) -> Optional[Dict[str, Any]]:
    """How the raw pass reads ``t``'s dtype: ``{"work", "extremes", "flip"}``, or None when this
    dtype needs the general path (complex, quantized, float8, bool)."""
    name = str(t.dtype).replace("torch.", "")
    if t.is_quantized or t.dtype.is_complex or name == "bool":
        return None
    small = t.numel() < PRECISE_BELOW and t.device.type != "mps"
    if name in _NATIVE_FLOATS:
        return {"work": torch.float64 if small else t.dtype, "extremes": "native", "flip": None, "name": name}
    if name in _HALF_FLOATS or name in _SMALL_INTS:
        return {"work": torch.float64 if small else torch.float32, "extremes": "native", "flip": None, "name": name}
    if t.dtype.is_floating_point:
        return None  # float8 variants: no reductions of their own
    if t.device.type == "mps":
        return None  # no float64 there

    if name in _SIGNED_VIEW:
        signed, offset = _SIGNED_VIEW[name]
        return {"work": torch.float64, "extremes": "flip", "flip": (getattr(torch, signed), offset), "name": name}
    return {"work": torch.float64, "extremes": "native", "flip": None, "name": name}


def raw_rows(torch, base: Any, how: Dict[str, Any], limit: int) -> Tuple[List[Tuple[Any, ...]], Optional[Tuple]]:
    """Per block ``(n, sum, sum of squares, min, max, zeros)`` as host floats, and the exact
    integer extremes ``(min, max)`` (None for floats). Blocks with NaN/Inf show them in min/max."""
    device = base.device
    cap = min(limit, base.numel())
    padded = -(-cap // ROW) * ROW
    scratch = torch.empty(padded, dtype=how["work"], device=device)
    counts_zeros = how["name"] in _NATIVE_FLOATS or how["name"] in _HALF_FLOATS
    signs = torch.empty(padded if counts_zeros else 0, dtype=how["work"], device=device)
    on_host = device.type == "cpu"  # a host check of the range is free there, a sync elsewhere
    wide = torch.float32 if device.type == "mps" else torch.float64
    counts, lows, highs, sums, norms, zeros = [], [], [], [], [], []
    for block in iter_blocks(base, limit):
        n = block.numel()
        rows, pad = _as_rows(torch, block, scratch, how["work"])
        # Half floats: extremes of the exact float32 copy (their own aminmax is 15x slower).
        low, high = _extremes(torch, rows.view(-1)[:n] if how["name"] in _HALF_FLOATS else block, how)
        # Row results are small (n / ROW values); their totals are taken in float64 at once.
        sums.append(rows.sum(dim=1).sum(dtype=wide))
        norms.append(torch.linalg.vector_norm(torch.linalg.vector_norm(rows, dim=1), dtype=wide))
        zeros.append(_zeros(torch, rows, signs, pad, low, high, on_host) if counts_zeros else None)
        counts.append(n)
        lows.append(low)
        highs.append(high)
    table = _fold(torch, sums, norms, _unflip(torch, lows, how), _unflip(torch, highs, how), zeros)
    exact = _int_extremes(torch, lows, highs, how)
    rows_out = [(n, s, q, low, high, z) for n, (s, q, low, high, z) in zip(counts, _host_table(table, len(counts)))]
    return rows_out, exact


def _extremes(torch, block: Any, how: Dict[str, Any]):
    if how["flip"] is not None:
        signed, offset = how["flip"]
        flipped = block.view(signed) ^ _sign_bit(torch, signed)
        return torch.aminmax(flipped)
    return torch.aminmax(block)


def _sign_bit(torch, signed) -> int:
    return int(torch.iinfo(signed).min)


def _as_rows(torch, block: Any, scratch: Any, work) -> Tuple[Any, int]:
    """``(rows, padding)``: a ``[k, ROW]`` contiguous float view holding the block (zero-padded)."""
    n = block.numel()
    if block.dtype == work and n % ROW == 0 and block.is_contiguous():
        return block.reshape(-1, ROW), 0
    padded = -(-n // ROW) * ROW
    buffer = scratch[:padded]
    buffer[:n].view(block.shape).copy_(block)  # casts on the way; strided blocks gathered here
    if padded > n:
        buffer[n:].zero_()
    return buffer.view(-1, ROW), padded - n


def _zeros(torch, rows: Any, signs: Any, pad: int, low: Any, high: Any, on_host: bool):
    """Exact zeros of a float block (its padding excluded); on the host, skipped where the
    block's range excludes 0.

    ``sign`` then a norm: the squares of -1/0/1 sum to the nonzeros, two fast ops where
    ``eq`` + ``count_nonzero`` took 7× an ``aminmax`` of the block (a bool written per value).
    Returns ``(sqrt(nonzeros), values)``; float32 sums of 0/1 are exact below 2**24.
    """
    if on_host:
        lo, hi = low.item(), high.item()
        if not (lo <= 0 <= hi):  # NaN extremes also land here: the careful pass counts them
            return None
    marks = signs[: rows.numel()].view(rows.shape)
    torch.sign(rows, out=marks)
    # sqrt(count of nonzeros): squared and rounded back in ``_fold`` (exact: a block < 2**24).
    return torch.linalg.vector_norm(marks), rows.numel() - pad


def _unflip(torch, extremes: List[Any], how: Dict[str, Any]) -> Any:
    """Per-block extremes back in the tensor's own dtype (from the sign-flipped signed view)."""
    stacked = torch.stack(extremes)
    if how["flip"] is None:
        return stacked
    signed, _ = how["flip"]
    return (stacked ^ _sign_bit(torch, signed)).view(getattr(torch, how["name"]))


def _fold(torch, sums, norms, lows, highs, zeros) -> Any:
    """The ``[blocks, 5]`` table ``(sum, squares, min, max, zeros)``, on the device, in float64."""
    wide = torch.float32 if lows.device.type == "mps" else torch.float64  # MPS has no float64
    zero = torch.zeros((), dtype=wide, device=lows.device)
    roots = torch.stack([z[0].to(wide) if z is not None else zero for z in zeros])
    sizes = torch.tensor([z[1] if z is not None else 0 for z in zeros], dtype=wide, device=lows.device)
    columns = (
        torch.stack(sums),
        torch.stack(norms).square(),
        lows.to(wide),
        highs.to(wide),
        sizes - roots.square().round(),  # zeros = values - nonzeros
    )
    return torch.stack(columns, dim=1)


def _int_extremes(torch, lows: List[Any], highs: List[Any], how: Dict[str, Any]) -> Optional[Tuple[int, int]]:
    """Exact min/max of an integer tensor from the per-block native extremes (one transfer)."""
    if how["name"] in _NATIVE_FLOATS or how["name"] in _HALF_FLOATS:
        return None
    pair = torch.stack([torch.stack(lows).min(), torch.stack(highs).max()]).to(torch.int64).tolist()
    low, high = int(pair[0]), int(pair[1])
    if how["flip"] is not None:
        offset = how["flip"][1]
        low, high = low + offset, high + offset
    return low, high


def _host_table(table: Any, count: int) -> List[Tuple[float, ...]]:
    values = table.reshape(-1).tolist()
    return [tuple(values[5 * i : 5 * i + 5]) for i in range(count)]
