"""Height and width of a 2-d conv input solved separately, when no square size fits the first Linear.

A model written for 64x128 images (or 128x44 spectrograms) flattens ``C * h * w`` features with
``h != w``: no square input gives them, and assuming one is our mistake, not the user's. Convolutions
and pooling act on each axis alone, so the features at an input of H x W are
``f(H, W) = C * a(H) * b(W)``, where ``a`` and ``b`` are the per-axis output sizes. With a base size D
that runs, and the smallest heights and widths that still run (where ``a = b = 1``):

- ``C = f(H_min, W_min)``, ``a(H) = f(H, D) / f(H_min, D)``, ``b(W) = f(D, W) / f(D, W_min)``;
- the check ``f(H_min, D) * f(D, W_min) == C * f(D, D)`` says the model is separable (else: no answer);
- ``in_features / C`` factors into ``a * b``; ``a`` and ``b`` grow by at most one per pixel, so every
  value up to the largest size is reached, and a bisection finds the smallest H with ``a(H) = p``.

Of the heights that give ``a(H) = p`` the roundest is taken (64 rather than 61: the most factors of
two). The factorisation nearest to square wins, height the shorter side; the swapped one is returned too
(the features cannot tell height from width). A final probe at the pair confirms it. ``f`` is the
caller's probe (memoised there); every probe is a batch-2 no-grad forward stopped at the Linear.
"""

from __future__ import annotations

from typing import Callable

Probe = Callable[[int, int], "int | None"]


def solve_rect(f: Probe, want: int, base: int, max_size: int) -> tuple[tuple[int, int], tuple[int, int] | None] | None:
    """((H, W), (W, H) or None) with ``f(H, W) == want``; None when the model does not tell."""
    found = _running_base(f, base, max_size)
    if found is None:
        return None
    d = found
    h_min = _smallest(lambda h: f(h, d) is not None, 1, d)
    w_min = _smallest(lambda w: f(d, w) is not None, 1, d)
    c, row, col, full = f(h_min, w_min), f(h_min, d), f(d, w_min), f(d, d)
    if not c or not row or not col or not full or row * col != c * full or want % c:
        return None  # not C * a(H) * b(W), or the Linear's size is not a multiple of the channels
    total = want // c
    pairs = sorted(
        ((p, total // p) for p in range(1, total + 1) if total % p == 0), key=lambda pq: (abs(pq[0] - pq[1]), pq[0])
    )
    for p, q in pairs[:12]:  # nearest to square first; each try costs two bisections
        h = _size_for(lambda s: f(s, d), p * row, h_min, max_size)
        w = _size_for(lambda s: f(d, s), q * col, w_min, max_size)
        if h is not None and w is not None and f(h, w) == want:
            swapped = (w, h) if h != w and f(w, h) == want else None
            return (h, w), swapped
    return None


def _running_base(f: Probe, base: int, max_size: int) -> int | None:
    """``base``, or the first doubling of it whose forward reaches the Linear."""
    while f(base, base) is None:
        if base >= max_size:
            return None
        base = min(base * 2, max_size)
    return base


def _smallest(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest size in [lo, hi] with ``ok`` (``ok(hi)`` holds, and ``ok`` never turns false above)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _size_for(g: Callable[[int], "int | None"], target: int, lo: int, max_size: int) -> int | None:
    """The roundest size >= lo with ``g(size) == target`` (g never decreases), or None: of the sizes that
    give the same features (61 to 64 for two stride-2 convolutions), the one with the most factors of
    two, as images are sized (64), the smallest of those."""
    hi = lo
    while (g(hi) or 0) < target:
        if hi >= max_size:
            return None
        hi = min(hi * 2, max_size)
    first = _smallest(lambda s: (g(s) or 0) >= target, lo, hi)
    if g(first) != target:
        return None
    step, top = 1, first  # the run of sizes with the same features is as long as the total stride: search near it
    while top + step <= max_size and g(top + step) == target:
        top, step = top + step, step * 2
    end = min(top + step, max_size + 1)  # g(end) > target, or past the largest size
    last = _smallest(lambda s: s > max_size or (g(s) or 0) > target, top + 1, end)
    return max(range(first, last), key=lambda s: ((s & -s), -s))
