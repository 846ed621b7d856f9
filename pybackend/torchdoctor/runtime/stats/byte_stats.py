"""8-bit integer tensors on the CPU: exact sums and sums of squares by int8 dot products.

A uint8/int8 line needs n, min, max, the sum and the sum of squares; as exact Python integers
they give an exactly rounded mean and standard deviation (integers count no zeros and hold no
NaN). Two ways to get them, both exact:

- **Dot products** (:func:`dot_sums`, on x86 CPUs with int8 dot-product instructions, VNNI or
  AMX): each block of ``CHUNKS * K`` bytes is written, as int8 ``y`` (``x - 128`` for uint8: the
  top bit flipped, 8 bytes an op; int8 as is), into a buffer that ends with ``K`` ones. Per run of
  ``K`` bytes one ``torch._int_mm`` of the ``[2, K]`` matrix (the run, and the ones: a strided
  view, no copy) by the run as a ``[K, 1]`` column gives its sum of squares and its sum: a matrix
  by a vector, which oneDNN streams at ~0.05 ns a byte (2-core Zen 4 EPYC with VNNI, one thread),
  where the Gram matrix of 32 runs (``[32, K] x [K, 32]``, used before) made 32 products a byte
  and took 0.33 ns. A run's sum of squares lies in ``[0, K * 128**2]``, below ``2**32``: the
  int32 the product wraps it to, read as unsigned, is exact (a kernel that saturated instead
  fails the probe). ``aminmax`` of the buffer (in cache) gives the extremes. 1e8 uint8 on one
  thread (that EPYC, load 3-5): ~13 ms (the flip ~6, as much as a plain int8 copy; the products
  ~5) against 4.3-4.6 ms for one ``aminmax`` of the tensor; the Gram pass took 46 ms,
  ``bincount`` 36 ms, ``sum(dtype=int64)`` alone 18 ms. The blocks are shared among the threads
  the load leaves idle, as the float pass does (:mod:`parallel`).
- **Histogram** (:func:`histogram_sums`, everywhere else): one ``bincount`` per block, the 256
  counts say everything; the blocks are shared among the idle threads too (1e8 uint8 on a 2-core
  AMD EPYC without VNNI: 51 ms on one thread, ~30 ms on two, against 3.6 ms for one 2-thread
  ``aminmax``: ``bincount`` is a scalar loop, ~0.4 ns a byte). Chosen where int8 products may be
  slow (no VNNI/AMX: a naive or emulated kernel) or inexact (pre-VNNI ``vpmaddubsw`` saturates
  int16 pairs), when a probe of the extreme values through a real reader (:func:`_products_exact`)
  does not come out exact, or, from then on, when a dot pass raised (the pass is redone by
  histogram).

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
# Bytes per product: the most below 2**18 in whole 4 KiB pages (K * 128**2 < 2**32: a sum of
# squares exact as unsigned int32). CHUNKS of them make a block of ~2 MiB: a flip and eight
# products. 1e8 uint8 on one thread (Zen 4 EPYC, 1 MiB L2 a core, 9 interleaved runs): 2**17 - 4 Ki
# in 1 MiB blocks 3.32x one aminmax, this K in 1 MiB blocks 3.11-3.29x, in 2 MiB 2.98-3.10x, 4 MiB
# 2.99-3.08x; 2**16 had taken 12% longer than 2**17 - 4 Ki.
K = (1 << 18) - (1 << 12)
CHUNKS = 8

Row = Tuple[float, ...]
_exact_products: Optional[bool] = None  # probed once per process (:func:`dot_applies`)


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
    if dot_applies(torch):
        try:
            return dot_sums(torch, base)
        except Exception:  # the probe passed but the real product raised: never again this process
            _exact_products = False
    return histogram_sums(torch, base)


def dot_applies(torch) -> bool:
    """int8 products are fast (VNNI/AMX) and came out exact on this machine's extreme values."""
    global _exact_products
    if _exact_products is None:
        _exact_products = _fast_int8(torch) and _products_exact(torch)
    return _exact_products


def _fast_int8(torch) -> bool:
    if not hasattr(torch.cpu, "get_capabilities"):  # torch <= 2.10
        return _fast_int8_before_2_11(torch)
    try:
        caps = torch.cpu.get_capabilities()
    except Exception:  # a CPU it cannot describe
        return False
    return bool(caps.get("avx512_vnni") or caps.get("avx_vnni") or caps.get("amx_int8"))


def _fast_int8_before_2_11(torch) -> bool:
    """torch <= 2.10 has no ``torch.cpu.get_capabilities``, but private probes of AVX512-VNNI and
    AMX (torch 2.10 has them; a torch without them: not known fast). Without this these torches
    always took the histogram path: 5e7 uint8 2.5x slower than the products (torch 2.10.0,
    AVX512-VNNI CPU, pinned to one core)."""
    for name in ("_is_vnni_supported", "_is_amx_tile_supported"):
        probe = getattr(torch.cpu, name, None)
        try:
            if probe is not None and probe():
                return True
        except Exception:  # noqa: BLE001 - a private probe: any failure means "not known fast"
            continue
    return False


def _products_exact(torch) -> bool:
    """A reader's products of the worst runs (all -128: the largest squares; -128 and 127 in
    turn: the pairs a saturating kernel gets wrong; every value) against the same sums in int64,
    through the reader's own strided ``[2, K]`` views (a kernel may take a small or contiguous
    product and refuse or mishandle the real one)."""
    try:
        probe = torch.full((CHUNKS, K), -128, dtype=torch.int8)
        probe[1, 1::2] = 127
        probe[2] = (torch.arange(K) % 256 - 128).to(torch.int8)
        probe[3:].random_(-128, 128, generator=torch.Generator().manual_seed(0))
        sums = _DotReader(torch, flip=False).read(probe.view(-1))[1]
        got = [_unwrap(torch, sums[c : c + 1]).tolist() for c in range(CHUNKS)]
        wide = (run.to(torch.int64) for run in probe)  # one run at a time: 2 MiB, not 16
        return got == [[int(w.square().sum()), int(w.sum())] for w in wide]
    except Exception:  # no int8 product in this build
        return False


def dot_sums(torch, base: Any) -> Tuple[int, int, int, int, int]:
    """``(n, sum, sum of squares, min, max)`` as Python integers, by int8 dot products.

    The blocks are shared among :func:`guard.block_workers` threads (:mod:`parallel`), each with
    its own buffer (:class:`_DotReader`); the sums are added at the end, in int64."""
    size = CHUNKS * K  # bytes per block
    flip = base.dtype == torch.uint8  # x ^ 0x80 read as int8 is x - 128
    found = map_blocks(iter_blocks(base, size), lambda: _DotReader(torch, flip).read, block_workers(base, size))
    counts, sums, lows, highs = zip(*found)
    squares, total = (int(v) for v in _unwrap(torch, torch.cat(sums)).tolist())
    count, low, high = sum(counts), min(lows), max(highs)
    if flip:  # back from y = x - 128
        squares += 256 * total + 128 * 128 * count
        total += 128 * count
        low, high = low + 128, high + 128
    return count, total, squares, low, high


def _unwrap(torch, sums: Any) -> Any:
    """``[sum of squares, sum]`` (int64) of ``[runs, 2, 1]`` int32 products: the squares read as
    unsigned (each below ``2**32``), the sums as they are (``|sum| <= K * 128``)."""
    wide = sums.view(-1, 2).to(torch.int64)
    return torch.stack([wide[:, 0].bitwise_and(0xFFFFFFFF).sum(), wide[:, 1].sum()])


# 0x80 in every byte of an int64 word (as a signed value): a uint8 block flipped 8 bytes an op,
# 12.7 ms for 1e8 bytes on one thread where the byte-wise xor took 17 ms (Xeon).
_TOP_BITS = -0x7F7F7F7F7F7F7F80


class _DotReader:
    """One thread's int8 buffer (``CHUNKS`` runs of ``K`` bytes, then ``K`` ones) and the views of
    its products: a block's ``[CHUNKS, 2, 1]`` sums of squares and sums.

    Once a block held both -128 and 127 (uint8 0 and 255: most blocks of 8-bit images), no later
    block can change the extremes: this reader stops reading them (1e8 random uint8: ~1 ms less).

    The views a whole block needs are made once: torch releases the GIL in every op it runs,
    even a view, and two readers then hand it back and forth at each one (1e8 uint8 on two
    readers, Xeon: 17.1 ms with the views made per block, 14.7 ms for the bare ops)."""

    def __init__(self, torch, flip: bool) -> None:
        self.torch, self.flip = torch, flip
        self.size = CHUNKS * K
        buffer = torch.empty(self.size + K, dtype=torch.int8)
        buffer[self.size :].fill_(1)
        self.body = buffer[: self.size]
        self.words, self.bytes = self.body.view(torch.int64), self.body.view(torch.uint8)
        # Run c and the ones K * (CHUNKS - c) bytes later, as the rows of one [2, K] matrix.
        runs = [buffer.as_strided((2, K), ((CHUNKS - c) * K, 1), c * K) for c in range(CHUNKS)]
        self.sums = torch.empty(CHUNKS, 2, 1, dtype=torch.int32)
        self.products = [(run, run[0].view(K, 1), self.sums[c]) for c, run in enumerate(runs)]
        self.xor, self.aminmax, self.matmul = torch.bitwise_xor, torch.aminmax, torch._int_mm
        self.pair = torch.empty(2, dtype=torch.int8)  # a block's (min, max), read in one call
        self.out = (self.pair[0], self.pair[1])
        self.saturated = False  # a block held -128 and 127: the extremes are known

    def read(self, block: Any) -> Tuple[int, Any, int, int]:
        """``(n, [CHUNKS, 2, 1] int32 sums of squares and sums, min, max)`` of one block, as int8 ``y``."""
        n = block.numel()
        if n != self.size or block.dim() != 1:
            return self._read_other(block, n)
        if not self.flip:
            self.body.copy_(block)
        elif block.is_contiguous() and block.storage_offset() % 8 == 0:  # aligned: 8 bytes an op
            self.xor(block.view(self.torch.int64), _TOP_BITS, out=self.words)
        else:
            self.xor(block, 0x80, out=self.bytes)
        return (n, self._products(CHUNKS), *self._extremes(self.body))

    def _products(self, used: int) -> Any:
        for matrix, column, out in self.products[:used]:
            self.matmul(matrix, column, out=out)
        return self.sums[:used].clone()  # all blocks' are added at once (an int64 sum a block: ~9 µs)

    def _extremes(self, values: Any) -> Tuple[int, int]:
        """``(min, max)`` of the int8 ``values``, or ``(-128, 127)`` once a block held both."""
        if self.saturated:
            return -128, 127
        self.aminmax(values, out=self.out)
        low, high = self.pair.tolist()
        self.saturated = low == -128 and high == 127
        return low, high

    def _read_other(self, block: Any, n: int) -> Tuple[int, Any, int, int]:
        """A block shorter than the buffer (the last one) or of several dimensions (a strided run):
        only the runs it reaches are multiplied, the rest of the last one zeroed (y = 0 adds nothing)."""
        torch = self.torch
        target = self.body[:n].view(block.shape)
        if not self.flip:
            target.copy_(block)
        else:
            torch.bitwise_xor(block, 0x80, out=target.view(torch.uint8))
        used = -(-n // K)
        self.body[n : used * K].zero_()
        return (n, self._products(used), *self._extremes(self.body[:n]))


def histogram_sums(torch, base: Any) -> Tuple[int, int, int, int, int]:
    """``(n, sum, sum of squares, min, max)`` from the 256 counts, one ``bincount`` per block.

    int8 is counted through its uint8 view (same bytes, no copy): bin ``b`` holds the value
    ``b`` below 128 and ``b - 256`` from 128 on."""
    # the blocks shared among the threads the load leaves idle, as the dot pass does (:mod:`parallel`):
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
