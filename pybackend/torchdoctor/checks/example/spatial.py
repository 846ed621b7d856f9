"""The spatial size of a conv model's input, solved from the first Linear after the convolutions.

``Net`` of pytorch/examples mnist is conv(1->32, 3), conv(32->64, 3), max_pool 2 (a function in
forward, not a module), flatten, ``fc1 = Linear(9216, 128)``: only a 28x28 input (or 29x29) gives
9216 features there. Reading the layers' arithmetic misses the functional pooling, so the size is
found by running the model: a probe forward at size S stops at the Linear's pre-hook and reads the
features reaching it, f(S). f never decreases with S (every conv and pool output size is
floor((S + 2p - k) / s) + 1), so a bisection over S finds the smallest size with f(S) equal to
``in_features`` in a handful of probes (batch 2, no grad), or says that none exists.

When no square size gives ``in_features`` (a 64x128 image, a spectrogram), a 2-d input's height and
width are solved separately (``spatial_rect.py``): the result is a tuple of one size per axis.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

MAX_SIZE = 512  # largest side tried; beyond it a probe forward costs more than the answer is worth
PROBE_BATCH = 2  # batch norm in train mode needs more than one value per channel


class _Reached(Exception):
    def __init__(self, features: int):
        self.features = features


def first_linear_after(model, conv):
    """(name, Linear) registered after ``conv``, the layer the flattened features go to; or None."""
    import torch.nn as nn

    after = False
    for name, m in model.named_modules():
        if m is conv:
            after = True
        elif after and isinstance(m, nn.Linear) and not isinstance(m, nn.modules.lazy.LazyModuleMixin):
            return name, m
    return None


def features_at(model, linear, channels: int, sizes: tuple[int, ...], dtype, device) -> int | None:
    """What reaches ``linear``'s last dimension for a (2, C, *sizes) input; None when the forward
    fails before it (too small for the kernels) or never calls it."""
    import torch

    def stop(_module, args):
        x = args[0] if args else None
        raise _Reached(int(x.shape[-1]) if isinstance(x, torch.Tensor) and x.dim() else -1)

    handle = linear.register_forward_pre_hook(stop)
    try:
        with torch.no_grad():
            model(torch.zeros((PROBE_BATCH, channels) + tuple(sizes), dtype=dtype, device=device))
    except _Reached as hit:
        return hit.features if hit.features >= 0 else None
    except Exception:  # too small for the kernels, or the model wants something else
        return None
    finally:
        handle.remove()
    return None


def forward_runs(model, channels: int, sizes: tuple[int, ...], dtype, device) -> bool:
    """Whether one (2, C, *sizes) batch of zeros goes through the whole forward (in eval mode, without
    gradients: batch norm's running statistics do not move)."""
    import torch

    with probing(model):
        try:
            with torch.no_grad():
                model(torch.zeros((PROBE_BATCH, channels) + tuple(sizes), dtype=dtype, device=device))
            return True
        except Exception:  # too small for a kernel further on, or the model wants something else
            return False


@contextlib.contextmanager
def probing(model) -> Iterator[None]:
    """Eval mode while probe forwards run (batch norm's running statistics must not move), every
    module's own mode put back after."""
    training = {m: m.training for m in model.modules()}
    model.eval()
    try:
        yield
    finally:
        for m, mode in training.items():
            m.training = mode


def solve(model, conv, dims: int, default: int, dtype, device) -> tuple[tuple[int, ...], str] | None:
    """(sizes, why) when a Linear after the convs fixes the size (why is "" when our default fits);
    None when it does not tell."""
    from .spatial_rect import solve_rect

    found = first_linear_after(model, conv)
    if found is None:
        return None
    name, linear = found
    want = linear.in_features
    seen: dict[tuple[int, ...], int | None] = {}

    def probe_at(sizes: tuple[int, ...]) -> int | None:
        if sizes not in seen:
            seen[sizes] = features_at(model, linear, conv.in_channels, sizes, dtype, device)
        return seen[sizes]

    def probe(size: int) -> int | None:
        return probe_at((size,) * dims)

    with probing(model):
        at_default = probe(default)
        if at_default == want:
            return (default,) * dims, ""
        size = _search(probe, want, default, at_default)
        rect = (
            solve_rect(lambda h, w: probe_at((h, w)), want, default, MAX_SIZE) if size is None and dims == 2 else None
        )
    where = f"{name} (Linear, in_features={want})"
    if size is not None:
        side = "x".join([str(size)] * dims)
        return (
            size,
        ) * dims, f"spatial size {side} solved from {where}: the smallest input whose flattened features match it"
    if rect is None:
        return None
    (h, w), other = rect
    also = f"; {other[0]}x{other[1]} fits as well: the features cannot tell height from width" if other else ""
    return (
        (h, w),
        f"spatial size {h}x{w} (H x W) solved from {where}: no square input gives {want} features, and height and "
        f"width solved one at a time do{also}",
    )


def _search(f, want: int, default: int, at_default: int | None) -> int | None:
    """The smallest S with f(S) >= want (None counts as too small), if f(S) == want there: doubling
    up from the default (cheap probes first) or bisecting below it."""
    if at_default is not None and at_default > want:
        lo, hi = 1, default
    else:
        lo, hi = default + 1, default * 2
        while True:
            value = f(hi)
            if value is not None and value >= want:
                break
            if hi >= MAX_SIZE:
                return None
            lo, hi = hi + 1, min(hi * 2, MAX_SIZE)
    while lo < hi:
        mid = (lo + hi) // 2
        value = f(mid)
        if value is None or value < want:
            lo = mid + 1
        else:
            hi = mid
    return lo if f(lo) == want else None
