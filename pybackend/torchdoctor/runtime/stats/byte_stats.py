"""8-bit integer tensors on the CPU: exact sums and sums of squares by int8 matrix products.

A uint8/int8 line needs n, min, max, the sum and the sum of squares; as exact Python integers
they give an exactly rounded mean and standard deviation (integers count no zeros and hold no
NaN). Two ways to get them, both exact:

- **Gram** (:func:`gram_sums`, on x86 CPUs with int8 dot-product instructions, VNNI or AMX):
  each block of ``(ROWS - 1) * K`` bytes is written, as int8 ``y`` (``x - 128`` for uint8: the top
  bit flipped, one pass; int8 as is), into the first rows of a ``[ROWS, K]`` buffer whose last row
  holds ones. One ``torch._int_mm(A, A.T)`` then gives the ROWS x ROWS Gram matrix: its diagonal
  is each row's sum of squares, its last row each row's sum; ``aminmax`` of the buffer (in cache) gives the
  extremes. Products accumulate in int32 and cannot overflow (``K * 128**2 <= 2**30``).
  Measured at 1e8 bytes on one thread (Xeon with AMX, load 7-8): flip 19 ms + Gram 20 ms +
  aminmax of the cached buffer, against 12-14 ms for one ``aminmax`` of the tensor and 132 ms
  for one ``bincount``; ``sum(dtype=int64)`` alone took 170 ms, int32/float64 copies with
  ``dot`` 55-100 ms. The Gram's products are mostly thrown away: the matrix unit does them
  faster than the vector unit does 2 of them per byte. The blocks are shared among the threads
  the load leaves idle, as the float pass does (:mod:`parallel`); uint8 is flipped 8 bytes an op.
  Measured at 1e8 uint8 on this task's idle 2-core Xeon (AMX): 54 ms on one reader, 28 ms on two,
  against 6.3 ms for one 2-thread ``aminmax`` (4.4x; it had been 8x on one thread). On a later
  idle 2-core Xeon with AMX, per 1 MiB block on one thread: flip 116 us, Gram 119 us, aminmax of
  the buffer 20 us; with the 32 x 32 Ki buffer, views made once and saturated extremes no longer
  read, 1e8 uint8 in 15-17 ms against 3.7-4.6 ms for one 2-thread ``aminmax`` (docs/views.md).
- **Histogram** (:func:`histogram_sums`, everywhere else): one ``bincount`` per block, the 256
  counts say everything; the blocks are shared among the idle threads too (1e8 uint8 on a 2-core
  AMD EPYC without VNNI: 51 ms on one thread, ~30 ms on two, against 3.6 ms for one 2-thread
  ``aminmax``: ``bincount`` is a scalar loop, ~0.43 ns a byte, where a float32 copy, row sums and
  squares came to ~0.35 ns, not worth a second exact path). Chosen where int8 products may be slow (no VNNI/AMX: a naive or
  emulated kernel) or inexact (pre-VNNI ``vpmaddubsw`` saturates int16 pairs), when a probe of
  the extreme values at the real ``[ROWS, K]`` shape (:func:`_products_exact`) does not come out
  exact, or, from then on, when a Gram pass raised (the pass is redone by histogram).

A block that is not a contiguous run is gathered by the copy into the buffer (or by
``bincount``), so extra memory stays bounded by one block. Between blocks the request's budget
may stop the pass (``blocks.iter_blocks``).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from .blocks import iter_blocks
from .guard import block_workers
from .parallel import map_blocks

BLOCK = 1 << 22  # bytes per bincount: few enough ops, and a strided block's gather stays small
# Gram buffer: ROWS rows of K bytes, the last of them ones, 1 MiB. On a 2-core Xeon with AMX
# (2 MiB L2 a core) 32 x 32 Ki took 17.6-18.3 ms for 1e8 uint8 on two readers where 16 x 64 Ki
# took 20.0-23.5, 32 x 16 Ki 19.2-21.3, 64 x 16 Ki 21.8, 64 x 32 Ki 20.6-22.0, 16 x 128 Ki 19.0
# (an older Xeon had measured 16 x 64 Ki fastest). K * 128**2 <= 2**30 keeps int32 entries exact.
ROWS = 32
K = 1 << 15

Row = Tuple[float, ...]
_exact_products: Optional[bool] = None  # probed once per process (:func:`gram_applies`)


def applies(torch, t: Any) -> bool:
    """A dense uint8/int8 tensor on the CPU (devices keep their parallel reductions)."""
    return t.device.type == "cpu" and t.dtype in (torch.uint8, torch.int8) and not t.is_quantized


def byte_rows(torch, base: Any) -> Tuple[List[Row], Tuple[int, int]]:
    """One row ``(n, sum, m2, min, max, nan, +inf, -inf, zeros)`` and the exact ``(min, max)``.

    ``base`` holds at least one element."""
    n, total, squares, low, high = _sums(torch, base)
    m2 = (squares * n - total * total) / n  # exact integers until this one rounding
    return [(n, float(total), m2, float(low), float(high), 0, 0, 0, 0)], (low, high)


def _sums(torch, base: Any) -> Tuple[int, int, int, int, int]:
    global _exact_products
    if gram_applies(torch):
        try:
            return gram_sums(torch, base)
        except Exception:  # the probe passed but the real product raised: never again this process
            _exact_products = False
    return histogram_sums(torch, base)


def gram_applies(torch) -> bool:
    """int8 products are fast (VNNI/AMX) and came out exact on this machine's extreme values."""
    global _exact_products
    if _exact_products is None:
        _exact_products = _fast_int8(torch) and _products_exact(torch)
    return _exact_products


def _fast_int8(torch) -> bool:
    try:
        caps = torch.cpu.get_capabilities()
    except Exception:  # older torch, or a CPU it cannot describe
        return False
    return bool(caps.get("avx512_vnni") or caps.get("avx_vnni") or caps.get("amx_int8"))


def _products_exact(torch) -> bool:
    """``_int_mm`` of the worst rows (-128 and 127, the pairs a saturating kernel gets wrong)
    against the same product in int64, at the real ``[ROWS, K]`` shape (a kernel may take a small
    shape and refuse or mishandle the real one)."""
    try:
        probe = torch.full((ROWS, K), -128, dtype=torch.int8)
        probe[1::2, 1::2] = 127
        probe[2::4] = (torch.arange(K) % 256 - 128).to(torch.int8)  # every value, K / 256 times
        # float64 holds every entry exactly (|entry| <= K * 128**2 = 2**30 < 2**53) and uses BLAS
        wide = probe.to(torch.float64)
        return bool(torch.equal(torch._int_mm(probe, probe.t()).to(torch.float64), wide @ wide.t()))
    except Exception:  # no int8 product in this build
        return False


def gram_sums(torch, base: Any) -> Tuple[int, int, int, int, int]:
    """``(n, sum, sum of squares, min, max)`` as Python integers, by int8 Gram matrices.

    The blocks are shared among :func:`guard.block_workers` threads (:mod:`parallel`), each with
    its own buffer (:class:`_GramReader`); the Gram matrices are added at the end, in int64."""
    size = (ROWS - 1) * K  # bytes per block
    flip = base.dtype == torch.uint8  # x ^ 0x80 read as int8 is x - 128
    found = map_blocks(iter_blocks(base, size), lambda: _GramReader(torch, flip).read, block_workers(base, size))
    counts, grams, lows, highs = zip(*found)
    gram = torch.stack(grams).to(torch.int64).sum(dim=0)
    diagonal, last = gram.diagonal()[: ROWS - 1], gram[ROWS - 1, : ROWS - 1]
    squares, total = (int(v) for v in torch.stack([diagonal.sum(), last.sum()]).tolist())
    count, low, high = sum(counts), min(lows), max(highs)
    if flip:  # back from y = x - 128
        squares += 256 * total + 128 * 128 * count
        total += 128 * count
        low, high = low + 128, high + 128
    return count, total, squares, low, high


# 0x80 in every byte of an int64 word (as a signed value): a uint8 block flipped 8 bytes an op,
# 12.7 ms for 1e8 bytes on one thread where the byte-wise xor took 17 ms.
_TOP_BITS = -0x7F7F7F7F7F7F7F80


class _GramReader:
    """One thread's ``[ROWS, K]`` int8 buffer, its last row ones: a block's rows, its Gram matrix.

    Once a block held both -128 and 127 (uint8 0 and 255: most blocks of 8-bit images), no later
    block can change the extremes: this reader stops reading them (1e8 random uint8: ~1 ms less).

    The views a whole block needs are made once: torch releases the GIL in every op it runs,
    even a view, and two readers then hand it back and forth at each one (1e8 uint8 on two
    readers: 17.1 ms with the views made per block, 14.7 ms for the bare ops)."""

    def __init__(self, torch, flip: bool) -> None:
        self.torch, self.flip = torch, flip
        self.buffer = torch.empty(ROWS, K, dtype=torch.int8)
        self.buffer[ROWS - 1].fill_(1)
        self.body = self.buffer[: ROWS - 1].view(-1)  # contiguous: the first ROWS - 1 rows
        self.words, self.bytes = self.body.view(torch.int64), self.body.view(torch.uint8)
        self.transposed = self.buffer.t()
        self.size = self.body.numel()
        self.xor, self.aminmax, self.gram = torch.bitwise_xor, torch.aminmax, torch._int_mm
        self.pair = torch.empty(2, dtype=torch.int8)  # a block's (min, max), read in one call
        self.out = (self.pair[0], self.pair[1])
        self.saturated = False  # a block held -128 and 127: the extremes are known

    def read(self, block: Any) -> Tuple[int, Any, int, int]:
        """``(n, Gram matrix, min, max)`` of one block, as int8 ``y``."""
        n = block.numel()
        if n != self.size or block.dim() != 1:
            return self._read_other(block, n)
        if not self.flip:
            self.body.copy_(block)
        elif block.is_contiguous() and block.storage_offset() % 8 == 0:  # aligned: 8 bytes an op
            self.xor(block.view(self.torch.int64), _TOP_BITS, out=self.words)
        else:
            self.xor(block, 0x80, out=self.bytes)
        return (n, self.gram(self.buffer, self.transposed), *self._extremes(self.body))

    def _extremes(self, values: Any) -> Tuple[int, int]:
        """``(min, max)`` of the int8 ``values``, or ``(-128, 127)`` once a block held both."""
        if self.saturated:
            return -128, 127
        self.aminmax(values, out=self.out)
        low, high = self.pair.tolist()
        self.saturated = low == -128 and high == 127
        return low, high

    def _read_other(self, block: Any, n: int) -> Tuple[int, Any, int, int]:
        """A block shorter than the buffer (the last one) or of several dimensions (a strided run)."""
        torch = self.torch
        target = self.body[:n].view(block.shape)
        if not self.flip:
            target.copy_(block)
        else:
            torch.bitwise_xor(block, 0x80, out=target.view(torch.uint8))
        if n < self.size:
            self.body[n:].zero_()  # y = 0 adds nothing to either sum
        return (n, torch._int_mm(self.buffer, self.transposed), *self._extremes(self.body[:n]))


def histogram_sums(torch, base: Any) -> Tuple[int, int, int, int, int]:
    """``(n, sum, sum of squares, min, max)`` from the 256 counts, one ``bincount`` per block.

    int8 is counted through its uint8 view (same bytes, no copy): bin ``b`` holds the value
    ``b`` below 128 and ``b - 256`` from 128 on."""
    # the blocks shared among the threads the load leaves idle, as the Gram pass does (:mod:`parallel`):
    # 1e8 uint8 on this 2-core AMD machine (no VNNI) 13.6x -> 8.5x one 2-thread aminmax
    found = map_blocks(iter_blocks(base, BLOCK), lambda: _counter(torch), block_workers(base, BLOCK))
    counts = torch.stack(found).sum(dim=0) if found else torch.zeros(256, dtype=torch.int64)
    signed = base.dtype == torch.int8
    used = [(b - 256 if signed and b >= 128 else b, c) for b, c in enumerate(counts.tolist()) if c]
    n = sum(c for _, c in used)
    total = sum(v * c for v, c in used)
    squares = sum(v * v * c for v, c in used)
    return n, total, squares, min(v for v, _ in used), max(v for v, _ in used)


def _counter(torch) -> Callable[[Any], Any]:
    """One thread's reader for :func:`histogram_sums`: a block's 256 counts."""

    def count(block: Any) -> Any:
        flat = block.reshape(-1)
        if flat.dtype == torch.int8:
            flat = flat.view(torch.uint8)
        return torch.bincount(flat, minlength=256)

    return count
