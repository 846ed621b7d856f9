"""The first pass over a float tensor on the CPU, with as few reads of each block as we can.

Every op on a cache-resident block costs about half of the ``aminmax`` that brought it from
memory (the CPU, not the memory, is the limit), so what counts is how many ops read each block.
Per block of the work dtype (float32: the tensor itself or the exact float32 copy of a
float16/bfloat16 block; float64: the tensor itself):

- extremes, when no value has its sign bit set: the bits of non-negative floats, read
  as signed integers of the same width, order exactly like the floats (+0 is the integer 0, +Inf
  is :data:`_INF_BITS` and every NaN lies above it). One integer ``aminmax`` of that view gives
  min and max, shows NaN/+Inf (extremes not finite: the caller reads that block carefully) and
  proves there is no -0.0; where the minimum is above 0 there are no zeros to count.
  ReLU outputs, attention weights, variances take this path.
- zeros, where the range holds 0: the block cast to bool (False exactly at ±0) and the bytes
  counted as words (:func:`raw_pass.count_true`): ~0.3 ns a value on a cached block, where
  ``count_nonzero`` of the integer view took ~0.6 (one thread, Xeon, 2026-12).
- otherwise (a negative value, -0.0 or a negative NaN): the float ``aminmax``. A block that needed this makes the next one
  start with it (signs rarely change from block to block), so mixed-sign data pays no extra read;
  a block whose minimum is not negative makes the next one try the integer view again.
- the sum: one cascade ``sum`` of the block;
- the squares: row norms of ``ROW`` elements (``vector_norm(dim=1)``, ~1e-8 relative where one
  ``dot`` of the block rounds at ~1e-5), squared and added in float64 for all blocks at the end.
  They are the block's first op, the read from memory (see ``_Reader._lean``).

Extremes cross to the host per block (free on the CPU: no device to wait for); sums, norms and
counts stay tensors until one transfer at the end. Returns the rows of :func:`raw_pass.raw_rows`.
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Tuple

from . import cpu_cache
from .blocks import iter_blocks
from .guard import block_workers, intra_op_when_quiet, machine_quiet
from .parallel import map_blocks
from .raw_pass import _LANE_BYTES, WORDS_PER_ROW, _Scratch, count_true

# Bytes of block per element of the general pass's block (:data:`tensor_stats.BLOCK_CPU`, 2**18):
# :func:`cpu_cache.block_bytes` for the general block (1 MiB on a CPU with a 2 MiB L2 a core while
# others load it, 4 MiB where an L3 holds such blocks and is idle: measurements in
# :mod:`cpu_cache`). The ratio keeps a caller's small blocks small (tests force many blocks).
REFERENCE_LIMIT = 1 << 18  # tensor_stats.BLOCK_CPU's value (tensor_stats imports this module)


def bytes_per_element() -> int:
    return max(1, cpu_cache.block_bytes(machine_quiet()) // REFERENCE_LIMIT)


# Elements per row norm: 4096 took 17% less time than 1024 on a cached 2**20 float32 block, at
# ~1e-8 relative error of the squares (1024: ~4e-9; 65536: ~4e-7; one dot: ~1e-5).
ROW = 4096

# Per work dtype: the integer dtype of the same width, its struct codes, and +Inf's bit pattern.
_BITS = {"float32": ("int32", "<i", "<f", 0x7F800000), "float64": ("int64", "<q", "<d", 0x7FF0000000000000)}
# Half floats are tried on their own bits before the float32 copy is made: an int16 ``aminmax``
# and an int16 -> bool cast (~0.05 ns a value, against ~0.17 from float32). bfloat16 has no struct
# code: its pattern is the top half of a float32's.
_HALF_BITS = {"float16": ("int16", "<h", "<e", 0x7C00), "bfloat16": ("int16", "<i", "<f", 0x7F80)}


def applies(torch, base: Any, how: Dict[str, Any]) -> bool:
    """A float tensor on the CPU whose work dtype is float32 or float64."""
    return base.device.type == "cpu" and str(how["work"]).replace("torch.", "") in _BITS and _is_float(how)


def block(limit: int, how: Dict[str, Any]) -> int:
    """Elements per block for a caller's ``limit`` (the general pass's block)."""
    itemsize = 8 if str(how["work"]) == "torch.float64" else 4
    return max(1, limit * bytes_per_element() // itemsize)


def _is_float(how: Dict[str, Any]) -> bool:
    return how["name"] in ("float32", "float64", "float16", "bfloat16")


def float_rows(torch, base: Any, how: Dict[str, Any], limit: int) -> Tuple[List[Tuple[Any, ...]], Optional[Tuple]]:
    """Per block ``(n, sum, sum of squares, min, max, zeros)`` as host floats; no integer extremes.

    A block whose extremes are not finite (NaN, ±Inf) shows them in min/max and is read again
    carefully by the caller; its other figures here are meaningless. The blocks are shared among
    :func:`guard.block_workers` threads (:mod:`parallel`), each with its own :class:`_Reader`, or
    read by one on as many intra-op threads when the machine is quiet (:func:`guard.intra_op_when_quiet`)."""
    cap = min(limit, base.numel())
    with intra_op_when_quiet(torch, block_workers(base, limit)) as readers:
        found = map_blocks(iter_blocks(base, limit), lambda: _Reader(torch, how["work"], cap, base.dtype).read, readers)
    if not found:
        return [], None
    counts, extremes, sums, norms, zeros = (list(column) for column in zip(*found))
    return _table(torch, counts, extremes, sums, norms, zeros), None


class _Reader:
    """One thread's scratch buffers, and whether its next block tries the integer view.

    Full-size blocks (all but the last, usually) reuse views made once here: a block then costs
    about ten torch calls (~3 µs each), not twenty, which is ~10% of a pass on 1 MiB blocks."""

    def __init__(self, torch, work: Any, cap: int, source: Any) -> None:
        self.torch, self.bits, self.work, self.cap = torch, _Bits(torch, work), work, cap
        name = str(source).replace("torch.", "")
        self.half = _Bits(torch, source) if name in _HALF_BITS else None  # tried before the copy
        self.scratch = _Scratch(torch, -(-cap // ROW) * ROW, work, torch.device("cpu"), ROW)
        self.marks = torch.empty(-(-cap // _LANE_BYTES) * _LANE_BYTES, dtype=torch.bool)
        self.by_bits = True  # the first block tries the integer view
        # Full blocks: [cap / 64 / 8, 64] int64 words over the bool marks (raw_pass.count_true).
        self.whole = cap % ROW == 0 and cap % _LANE_BYTES == 0
        self.words = self.marks.view(torch.int64).view(-1, WORDS_PER_ROW) if self.whole else None
        self.buffer: Optional[Any] = None  # the scratch as [cap], once a full block needs a copy
        self.buffer_rows: Optional[Any] = None  # the same as [cap / ROW, ROW]
        # Outputs written in place (``out=``) and their views, made once: the lean path (_lean).
        self.pair = torch.empty(2, dtype=work)  # a block's min and max, read in one tolist()
        self.pair_out = (self.pair[0], self.pair[1])
        self.lanes = torch.empty(self.marks.numel() // _LANE_BYTES, dtype=torch.int64)  # a sum per row of words
        self.lane_bytes = self.lanes.view(torch.uint8)

    def read(self, block: Any) -> Tuple[int, Tuple[float, float], Any, Any, Any]:
        """``(n, (min, max), sum, row norms, zeros)`` of one block; zeros as an int when known on
        the host (0 where the range excludes 0), else as a 0-d tensor of the *nonzero* values (the
        block's size minus it is done for all blocks at once, in :func:`_table`)."""
        torch = self.torch
        n = block.numel()
        if self.half is not None:
            return self._half_read(block, n)
        if self.whole and n == self.cap and block.dim() == 1:
            if block.dtype == self.work and block.is_contiguous():
                return self._lean(block, n)
        bits = self.bits
        rows, values = self._rows(block, n)
        norms = torch.linalg.vector_norm(rows, dim=1)  # before the extremes: see _lean
        found = bits.extremes(values) if self.by_bits else None
        if found is None:  # a sign bit is set somewhere: float extremes
            low, high = self._float_extremes(values)
            zero = self._zeros(values, low, high)
        else:  # no sign bit: the integer view is 0 exactly at +0, and casts to bool faster
            low, high, integer_zero = found
            zero = self._zeros(bits.view(values), low, high) if integer_zero else 0
        return n, (low, high), rows.sum(), norms, zero

    def _half_read(self, block: Any, n: int) -> Tuple[int, Tuple[float, float], Any, Any, Any]:
        """:meth:`read` of a float16/bfloat16 block. Its int16 bits give the extremes: one int16
        ``aminmax`` (the read from memory, half the bytes of the float32 copy) orders values of
        one sign by magnitude. Only where both signs occur is the minimum, the most negative
        value, read from the float32 copy, by ``amin`` alone (about 40% of a float ``aminmax``).
        Zeros are counted on the int16 bits (False exactly at +0) unless a -0.0 is there (the
        smallest int16, so the int16 minimum shows it): then on the copy. 1e8 ``randn`` values,
        one thread, CPU time of a summary against one ``aminmax``: bfloat16 4.24x, float16 4.07x,
        where the float ``aminmax`` of the copy took 4.38x and 4.49x (2-core Zen 4 EPYC, torch
        2.13, 2026-12-07)."""
        half = self.half
        assert half is not None
        first, last = half.patterns(block)
        rows, values = self._rows(block, n)
        norms = self.torch.linalg.vector_norm(rows, dim=1)
        low, high = half.half_range(first, last)
        if low is None:  # both signs: the most negative value, from the copy (NaN and -Inf show)
            low = self.torch.amin(values).item()
        if not (low <= 0 <= high):  # no zero (or NaN, which the careful pass counts)
            zero: Any = 0
        elif first == half.negative_zero:  # a -0.0: the copy's bool cast is False at both zeros
            zero = self._zeros(values, low, high)
        else:
            zero = self._zeros(half.view(block), low, high)
        return n, (low, high), rows.sum(), norms, zero

    def _rows(self, block: Any, n: int) -> Tuple[Any, Any]:
        """``(rows, values)``: the block as rows of ``ROW`` (a copy where it must be) and its values."""
        if self.whole and n == self.cap:
            return self._full(block)
        rows = self.scratch.rows(block)
        values = block if rows.data_ptr() == block.data_ptr() and block.dim() == 1 else rows.view(-1)[:n]
        return rows, values

    def _lean(self, block: Any, n: int) -> Tuple[int, Tuple[float, float], Any, Any, Any]:
        """:meth:`read` of a full 1-D contiguous block of the work dtype (most blocks of a float32 or
        float64 tensor): eight torch calls where the general path makes about thirteen, with the
        extremes written into a buffer made once and read in one ``tolist()``. Two readers take
        turns at the GIL at every call, so a call saved is worth more than its own ~3 µs: a 1e8
        float32 summary on two readers took 77 ms against 82 in 4 MiB blocks, 72 against 82 in
        1 MiB blocks (2-core AMX Xeon, 15 interleaved runs in one process, 2026-12-06)."""
        rows = block.view(-1, ROW)
        # The row norms first: the op that reads a block first waits for memory anyway, and they
        # are the op with the most arithmetic, so their work hides under that wait (norms first:
        # 2.36x one aminmax, extremes first: 2.77x; 1e8 float32 in 4 MiB blocks, one thread,
        # 2-core Zen 4 EPYC, 2026-12-07). The other ops then read the block from cache.
        norms = self.torch.linalg.vector_norm(rows, dim=1)
        found = self.bits.extremes(block) if self.by_bits else None
        if found is None:  # a sign bit is set somewhere: float extremes
            low, high = self._float_extremes(block)
            zero = self._zeros(block, low, high)
        else:  # no sign bit: +0 occurs exactly where the integer view's minimum is 0
            low, high, integer_zero = found
            zero = self._zeros(block, low, high) if integer_zero else 0
        return n, (low, high), rows.sum(), norms, zero

    def _float_extremes(self, values: Any) -> Tuple[float, float]:
        """Float min and max, written into the reader's buffer and read in one ``tolist()``; the
        next block tries the integer view only if no value was negative."""
        self.torch.aminmax(values, out=self.pair_out)
        low, high = self.pair.tolist()
        self.by_bits = low >= 0
        return low, high

    def _full(self, block: Any) -> Tuple[Any, Any]:
        """``(rows, values)`` of a block of ``cap`` elements: itself when it is a contiguous run
        of the work dtype, else its copy (cast or gathered) in the scratch buffer."""
        if block.dtype == self.work and block.is_contiguous():
            flat = block.view(-1)
            return flat.view(-1, ROW), flat
        if self.buffer is None:
            self.buffer = self.torch.empty(self.cap, dtype=self.work)
            self.buffer_rows = self.buffer.view(-1, ROW)
        (self.buffer if block.dim() == 1 else self.buffer.view(block.shape)).copy_(block)
        return self.buffer_rows, self.buffer

    def _zeros(self, values: Any, low: float, high: float) -> Any:
        """The nonzero values (a 0-d tensor) where the range holds ±0, else the int 0 (no zeros):
        the bool cast (False exactly at ±0) and a count of words, ~0.3 ns a value, where
        count_nonzero of the integer view took ~0.6 (1 MiB blocks, one thread)."""
        if self.words is None or values.numel() != self.cap or not (low <= 0 <= high):
            return _bool_zeros(self.torch, values, self.marks, low, high)
        (self.marks if values.dim() == 1 else self.marks.view(values.shape)).copy_(values)
        self.torch.sum(self.words, dim=1, out=self.lanes)
        return self.lane_bytes.sum(dtype=self.torch.int64)  # the nonzeros


class _Bits:
    """The integer view of a float block and what its extremes say about the floats."""

    def __init__(self, torch, work: Any) -> None:
        key = str(work).replace("torch.", "")
        name, self.int_code, self.float_code, self.inf = _BITS[key] if key in _BITS else _HALF_BITS[key]
        self.torch, self.dtype = torch, getattr(torch, name)
        self.pair = torch.empty(2, dtype=self.dtype)  # the extremes, written in place, read in one tolist()
        self.pair_out = (self.pair[0], self.pair[1])
        self.shift = 16 if key == "bfloat16" else 0  # bfloat16 bits are a float32's top half
        width = torch.iinfo(self.dtype).bits
        self.magnitude = (1 << (width - 1)) - 1  # the bits below the sign bit
        self.negative_zero = -(1 << (width - 1))  # -0.0's pattern: the smallest integer

    def view(self, values: Any) -> Any:
        return values.view(self.dtype)

    def patterns(self, values: Any) -> Tuple[int, int]:
        """The smallest and largest bit patterns, as signed integers."""
        self.torch.aminmax(self.view(values), out=self.pair_out)
        low, high = self.pair.tolist()
        return low, high

    def extremes(self, values: Any) -> Optional[Tuple[float, float, bool]]:
        """``(min, max, whether +0 occurs)``, or None when some value has its sign bit set."""
        low, high = self.patterns(values)
        if low < 0:
            return None
        return self._float(low), self._float(high), low == 0

    def half_range(self, first: int, last: int) -> Tuple[Optional[float], float]:
        """``(min, max)`` of a half float block from its smallest and largest int16 patterns
        (:meth:`patterns`); min is None where both signs occur. A pattern with the sign bit is a
        negative int16 that grows with the value's magnitude: among negative values the largest
        pattern is the minimum (a negative NaN lies above every negative number), the smallest
        the maximum. Where a positive value occurs, the largest pattern is the maximum (a
        positive NaN lies above +Inf), and the minimum is not in the patterns."""
        if first >= 0:  # no sign bit
            return self._float(first), self._float(last)
        if last < 0:  # every sign bit set
            return self._float(last), self._float(first)
        return None, self._float(last)

    def _float(self, pattern: int) -> float:
        if (pattern & self.magnitude) > self.inf:
            return float("nan")
        return struct.unpack(self.float_code, struct.pack(self.int_code, pattern << self.shift))[0]


def _bool_zeros(torch, values: Any, marks: Any, low: float, high: float) -> Any:
    """The nonzero values (a 0-d tensor: cast to bool, a value is False exactly when it is ±0)
    where the range holds 0; the int 0 (no zeros) where it does not, or where the extremes are NaN
    (the careful pass counts them)."""
    if not (low <= 0 <= high):
        return 0
    flags = marks[: values.numel()]
    flags.view(values.shape).copy_(values)
    return count_true(torch, flags)


def _table(torch, counts: List[int], extremes, sums, norms, zeros) -> List[Tuple[Any, ...]]:
    """The host rows; sums, squares and counted zeros cross to the host in one transfer."""
    wide = torch.float64
    lengths = torch.tensor([r.shape[0] for r in norms], dtype=torch.long)
    owner = torch.repeat_interleave(torch.arange(len(norms)), lengths)
    squares = torch.zeros(len(norms), dtype=wide).index_add_(0, owner, torch.cat(norms).to(wide).square())
    counted = [i for i, z in enumerate(zeros) if not isinstance(z, int)]  # tensors: nonzero counts
    columns = [torch.stack(sums).to(wide), squares]
    if counted:  # one stack: a cast and a reshape of each 0-d count cost ~50 µs a block
        columns.append(torch.stack([zeros[i] for i in counted]).to(wide))
    flat = torch.cat(columns).tolist()
    blocks = len(counts)
    found = {i: counts[i] - nonzero for i, nonzero in zip(counted, flat[2 * blocks :])}
    return [
        (n, flat[i], flat[blocks + i], low, high, found.get(i, 0.0))
        for i, (n, (low, high)) in enumerate(zip(counts, extremes))
    ]
