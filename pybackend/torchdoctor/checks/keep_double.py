"""Float64 kept through the model's own downcasts during the gradient check (worker side, torch lazily).

The gradient check runs the model in float64, where a central difference resolves a gradient to
about 1e-10. Some models cast back down in their own code: every Hugging Face loss starts with
``logits.float()``, attention code asks ``softmax(..., dtype=torch.float32)``, mixed-precision code
calls ``.to(torch.float16)``. The loss then comes out in float32 and the check can only see gross
errors. :func:`keeping_double` wraps the loss in a ``TorchFunctionMode`` that, for float64 tensors
only, turns ``.float()`` / ``.half()`` / ``.bfloat16()`` into no-ops and a lower float dtype
given to ``.to()``, ``.type()`` or any ``dtype=`` keyword into float64. Nothing else changes: an
integer or boolean cast, a device move, and every tensor that is not float64 pass through as they
are. The mode is used only when it makes the loss float64 and the forward still runs; otherwise the
check goes on in the model's precision and says so.
"""

from __future__ import annotations

from typing import Any, Callable


def _lower_float(dtype) -> bool:
    import torch

    return isinstance(dtype, torch.dtype) and dtype.is_floating_point and dtype != torch.float64


def _type_name_is_lower(name) -> bool:
    return isinstance(name, str) and any(k in name for k in ("FloatTensor", "HalfTensor", "BFloat16Tensor"))


def _mode():
    import torch
    from torch.overrides import TorchFunctionMode

    same = {torch.Tensor.float, torch.Tensor.half, torch.Tensor.bfloat16}

    class KeepDouble(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            first = args[0] if args else None
            if isinstance(first, torch.Tensor) and first.dtype == torch.float64:
                if func in same:
                    return first
                if func is torch.Tensor.to:
                    args, kwargs = _to_args(args, kwargs)
                elif func is torch.Tensor.type and args[1:] and (_lower_float(args[1]) or _type_name_is_lower(args[1])):
                    return first
            if _lower_float(kwargs.get("dtype")) and any(
                isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args
            ):
                kwargs["dtype"] = torch.float64
            return func(*args, **kwargs)

    return KeepDouble()


def _to_args(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``Tensor.to``'s arguments with a lower float dtype (positional, keyword, or another tensor's) made float64."""
    import torch

    rest = []
    for a in args[1:]:
        if _lower_float(a):
            a = torch.float64
        elif isinstance(a, torch.Tensor) and _lower_float(a.dtype):
            kwargs.setdefault("device", a.device)  # x.to(other): keep other's device, not its precision
            continue
        rest.append(a)
    if _lower_float(kwargs.get("dtype")):
        kwargs["dtype"] = torch.float64
    return (args[0], *rest), kwargs


def keeping_double(loss_fn: Callable[[], Any]) -> Callable[[], Any]:
    """``loss_fn`` run under the mode above."""

    def run():
        with _mode():
            return loss_fn()

    return run


def keep_double_if_needed(loss_fn: Callable[[], Any]) -> tuple[Callable[[], Any], bool]:
    """(loss_fn, False) when the loss is already float64 (or the mode does not make it so, or breaks
    the forward); (the wrapped loss_fn, True) when the mode makes a float32 loss float64."""
    import torch

    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        loss = loss_fn()
        if not isinstance(loss, torch.Tensor) or loss.dtype == torch.float64 or not loss.is_floating_point():
            return loss_fn, False
        wrapped = keeping_double(loss_fn)
        try:
            kept = wrapped()
        except Exception:  # the model needs its cast (a float32-only kernel): stay in its precision
            return loss_fn, False
    if isinstance(kept, torch.Tensor) and kept.dtype == torch.float64:
        return wrapped, True
    return loss_fn, False
