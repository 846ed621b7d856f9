"""The first, and almost always the only, pass over a tensor's values (floats on the CPU take
:mod:`float_pass` instead, which reads each block fewer times; this module's scratch buffer and
word count serve it too).

Per block, while it is in cache: one ``aminmax`` (in the tensor's own dtype for integers, exact;
float16/bfloat16 on their exact float32 copy, their own kernel being the slow part), the sum
(one cascade ``sum`` of the block; for 8-bit integers, whose float32 sums must stay exact, row
sums by rows of ``ROW`` elements), the squares (float32: row norms, ``vector_norm(dim=1)``,
~1e-9 relative where one ``dot`` of the block rounds at ~1e-6; float64: one ``dot``), reading
the block in cache and writing nothing, and for floats the count of exact zeros
where the block's range contains 0: the block cast to bool (one byte written per value) and those
bytes added eight at a time as int64 words (:func:`count_true`), four times cheaper than
``count_nonzero`` of the bool block and ten times cheaper than ``sign`` plus a norm. A block that
is not already a contiguous run of the work dtype is first copied into one scratch buffer
(float32 for 8-bit integers, float16 and bfloat16; float64 for wider integers), so nothing the
size of the tensor is allocated.

Tensors that fit in one block and are small (:data:`PRECISE_BELOW`) take :func:`direct_rows`:
a handful of whole-tensor float64 ops and one host transfer, an exact two-pass about the mean,
so a model's thousands of small parameters cost tens of microseconds each, not milliseconds.

The row results stay on the device and are folded into one small table per block at the end,
in float64; the table crosses to the host once. Sums are taken about 0 here: the caller checks
from the sums themselves whether the mean dwarfs the spread and, only then, reads the tensor
again about its mean (see :mod:`tensor_stats`).
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from .blocks import iter_blocks
from .guard import block_workers
from .parallel import map_blocks

ROW = 1024  # elements per row sum: an 8-bit integer row sums exactly in float32 (< 2**24)
# Tensors this small are summed in float64 whatever their dtype: it costs nothing at this size
# and keeps their figures to float64 precision (float32 row norms round at ~1e-7).
PRECISE_BELOW = 1 << 16
# Bool bytes added as int64 words, this many words per row: each byte lane of a row's sum then
# holds at most 64, so no lane carries into the next and the sign bit is never reached.
WORDS_PER_ROW = 64
_LANE_BYTES = 8 * WORDS_PER_ROW

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


def is_float(how: Dict[str, Any]) -> bool:
    return how["name"] in _NATIVE_FLOATS or how["name"] in _HALF_FLOATS


def raw_rows(torch, base: Any, how: Dict[str, Any], limit: int) -> Tuple[List[Tuple[Any, ...]], Optional[Tuple]]:
    """Per block ``(n, sum, sum of squares, min, max, zeros)`` as host floats, and the exact
    integer extremes ``(min, max)`` (None for floats). Blocks with NaN/Inf show them in min/max.

    On the CPU the blocks are shared among :func:`guard.block_workers` threads (:mod:`parallel`)."""
    cap = min(limit, base.numel())
    workers = block_workers(base, limit)
    found = map_blocks(iter_blocks(base, limit), lambda: _Reader(torch, how, cap, base.device).read, workers)
    if not found:
        return [], None
    counts, sums, squares, lows, highs, zeros = (list(column) for column in zip(*found))
    table = _fold(torch, sums, squares, _unflip(torch, lows, how), _unflip(torch, highs, how), zeros)
    exact = _int_extremes(torch, lows, highs, how)
    rows_out = [(n, s, q, low, high, z) for n, (s, q, low, high, z) in zip(counts, _host_table(table, len(counts)))]
    return rows_out, exact


class _Reader:
    """One thread's scratch buffers for :func:`raw_rows`."""

    def __init__(self, torch, how: Dict[str, Any], cap: int, device: Any) -> None:
        self.torch, self.how = torch, how
        self.scratch = _Scratch(torch, -(-cap // ROW) * ROW, how["work"], device)
        self.counts_zeros = is_float(how)
        size = -(-cap // _LANE_BYTES) * _LANE_BYTES if self.counts_zeros else 0
        self.marks = torch.empty(size, dtype=torch.bool, device=device)
        self.on_host = device.type == "cpu"  # a host check of the range is free there, a sync elsewhere
        self.wide = torch.float32 if device.type == "mps" else torch.float64
        self.by_rows = how["work"] == torch.float32 and not is_float(how)  # 8-bit ints: exact row sums

    def read(self, block: Any) -> Tuple[int, Any, Any, Any, Any, Any]:
        """``(n, sum, squares, min, max, zeros)`` of one block, all but ``n`` as tensors."""
        torch, how = self.torch, self.how
        n = block.numel()
        # Integers: extremes in their own dtype, read first, from memory; the copy then finds the
        # block in cache (1e8 int64 on one thread: 91 ms against 102 copying first, Zen 4 EPYC).
        # Half floats: extremes of the exact float32 copy (their own aminmax is 15x slower).
        own = how["name"] not in _HALF_FLOATS and block.dtype != how["work"]
        if own:
            low, high = _extremes(torch, block, how)
        rows = self.scratch.rows(block)
        values = rows.view(-1)[:n]
        if not own:
            low, high = _extremes(torch, values, how)
        # Row results are small (n / ROW values); their totals are taken in float64. Otherwise
        # one op: a cascade sum of the block (padding adds 0); float64 squares as one dot.
        flat = rows.view(-1)
        total = rows.sum(dim=1).sum(dtype=self.wide) if self.by_rows else flat.sum()
        if how["work"] == torch.float64:
            squares = torch.dot(flat, flat)
        else:  # float32 row norms: a dot of the whole block rounds at ~1e-6 (rows: ~1e-9)
            squares = torch.linalg.vector_norm(torch.linalg.vector_norm(rows, dim=1), dtype=self.wide).square()
        zeros = _zeros(torch, values, self.marks, low, high, self.on_host) if self.counts_zeros else None
        return n, total, squares, low, high, zeros


class _Scratch:
    """One work-dtype buffer, allocated on first use, that blocks are copied into as rows."""

    def __init__(self, torch, size: int, work: Any, device: Any, row: int = ROW) -> None:
        self.torch, self.size, self.work, self.device, self.row = torch, size, work, device, row
        self.buffer: Optional[Any] = None

    def rows(self, block: Any) -> Any:
        """A ``[k, row]`` contiguous work-dtype view holding the block (zero-padded)."""
        n, row = block.numel(), self.row
        if block.dtype == self.work and n % row == 0 and block.is_contiguous():
            return block.reshape(-1, row)
        if self.buffer is None:
            self.buffer = self.torch.empty(self.size, dtype=self.work, device=self.device)
        padded = -(-n // row) * row
        buffer = self.buffer[:padded]
        buffer[:n].view(block.shape).copy_(block)  # casts on the way; strided blocks gathered here
        if padded > n:
            buffer[n:].zero_()
        return buffer.view(-1, row)


def direct_rows(torch, base: Any, how: Dict[str, Any]) -> Tuple[List[Tuple[Any, ...]], Optional[Tuple]]:
    """One small tensor, whole, in the work dtype (float64 off MPS): extremes, sum, the squares
    about the mean (an exact two-pass) and the zeros, in one host transfer. No rows when its
    extremes are not finite: the caller then reads it carefully, as a block with NaN/Inf.

    Every op is a plain ``torch`` call (no Tensor operators, some of which go through Python)."""
    n = base.numel()
    flat = base.reshape(-1)
    values = flat if flat.dtype == how["work"] else flat.to(how["work"])
    floats = is_float(how)
    low, high = _extremes(torch, values if floats else flat, how)
    total = values.sum()
    norm = torch.linalg.vector_norm(torch.sub(values, torch.div(total, n)))
    if floats:
        nonzero = torch.count_nonzero(values.bool()).to(values.dtype)
        s, root, lo, hi, nonzeros = torch.stack([total, norm, low, high, nonzero]).tolist()
        exact = None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return [], exact
    else:  # exact extremes as int64 (the flipped signed view for wide unsigned), then shifted back
        s, root = torch.stack([total, norm]).tolist()
        pair = torch.stack([low, high]).to(torch.int64).tolist()
        exact = _shifted_pair(int(pair[0]), int(pair[1]), how)
        lo, hi, nonzeros = float(exact[0]), float(exact[1]), n
    return [(n, s, root * root, lo, hi, 0, 0, 0, n - nonzeros)], exact


def _shifted_pair(low: int, high: int, how: Dict[str, Any]) -> Tuple[int, int]:
    if how["flip"] is not None:
        offset = how["flip"][1]
        return low + offset, high + offset
    return low, high


def _extremes(torch, block: Any, how: Dict[str, Any]):
    if how["flip"] is not None:
        signed, offset = how["flip"]
        flipped = block.view(signed) ^ _sign_bit(torch, signed)
        return torch.aminmax(flipped)
    return torch.aminmax(block)


def _sign_bit(torch, signed) -> int:
    return int(torch.iinfo(signed).min)


def count_true(torch, marks: Any) -> Any:
    """True values in a 1-D bool tensor, as a 0-d int64 tensor on its device.

    On the CPU, whole rows of ``WORDS_PER_ROW`` int64 words are summed as words (each byte lane
    counts its own bytes, at most 64: no carry), then the lanes' bytes are added; the ragged end
    goes through ``count_nonzero``. Elsewhere ``count_nonzero`` is already at memory speed.
    """
    n = marks.numel()
    whole = n - n % _LANE_BYTES if marks.device.type == "cpu" else 0
    parts = []
    if whole:
        words = marks[:whole].view(torch.int64).view(-1, WORDS_PER_ROW)
        parts.append(words.sum(dim=1).view(torch.uint8).sum(dtype=torch.int64))
    if whole < n:
        parts.append(torch.count_nonzero(marks[whole:]))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _zeros(torch, values: Any, marks: Any, low: Any, high: Any, on_host: bool):
    """Exact zeros of a float block (a 0-d tensor); on the host, None where the block's range
    excludes 0. Cast to bool, a value is False exactly when it is ±0 (NaN is True)."""
    if on_host:
        lo, hi = low.item(), high.item()
        if not (lo <= 0 <= hi):  # NaN extremes also land here: the careful pass counts them
            return None
    n = values.numel()
    flags = marks[:n]
    flags.copy_(values)
    return n - count_true(torch, flags)


def _unflip(torch, extremes: List[Any], how: Dict[str, Any]) -> Any:
    """Per-block extremes back in the tensor's own dtype (from the sign-flipped signed view)."""
    stacked = torch.stack(extremes)
    if how["flip"] is None:
        return stacked
    signed, _ = how["flip"]
    return (stacked ^ _sign_bit(torch, signed)).view(getattr(torch, how["name"]))


def _fold(torch, sums, squares, lows, highs, zeros) -> Any:
    """The ``[blocks, 5]`` table ``(sum, squares, min, max, zeros)``, on the device, in float64."""
    wide = torch.float32 if lows.device.type == "mps" else torch.float64  # MPS has no float64
    zero = torch.zeros((), dtype=wide, device=lows.device)
    columns = (
        torch.stack(sums).to(wide),
        torch.stack(squares).to(wide),
        lows.to(wide),
        highs.to(wide),
        torch.stack([z.to(wide) if z is not None else zero for z in zeros]),
    )
    return torch.stack(columns, dim=1)


def _int_extremes(torch, lows: List[Any], highs: List[Any], how: Dict[str, Any]) -> Optional[Tuple[int, int]]:
    """Exact min/max of an integer tensor from the per-block native extremes (one transfer)."""
    if is_float(how):
        return None
    pair = torch.stack([torch.stack(lows).min(), torch.stack(highs).max()]).to(torch.int64).tolist()
    return _shifted_pair(int(pair[0]), int(pair[1]), how)


def _host_table(table: Any, count: int) -> List[Tuple[float, ...]]:
    values = table.reshape(-1).tolist()
    return [tuple(values[5 * i : 5 * i + 5]) for i in range(count)]
