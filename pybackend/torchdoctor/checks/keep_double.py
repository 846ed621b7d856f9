"""Float64 kept through the model's own downcasts during the gradient check (worker side, torch lazily).

The gradient check runs the model in float64, where a central difference resolves a gradient to
about 1e-10. Some models cast back down in their own code: every Hugging Face loss starts with
``logits.float()``, attention code asks ``softmax(..., dtype=torch.float32)``, mixed-precision code
calls ``.to(torch.float16)``. The loss then comes out in float32 and the check can only see gross
errors. :func:`keeping_double` wraps the loss in a ``TorchFunctionMode`` that, for float64 tensors
only, turns ``.float()`` / ``.half()`` / ``.bfloat16()`` into no-ops and a lower float dtype
given to ``.to()``, ``.type()``, ``.type_as()`` or any ``dtype=`` keyword into float64. Nothing else changes: an
integer or boolean cast, a device move, and every tensor that is not float64 pass through as they
are.

A cast need not reach the loss to matter: Hugging Face's ``T5LayerNorm`` computes its variance from
``hidden_states.to(torch.float32)`` and goes on in float64, so the loss *is* float64 while every
layer norm has rounded to float32 inside; a central difference with a step of 3e-6 then measures
float32 noise (a tiny T5 got a false FAIL with a thousand "kinks"). So the loss's dtype is not the
test: :func:`keep_double_if_needed` first runs the loss under a watching mode that records every
call turning a float64 tensor into a lower float one (whatever the call: ``.to``, ``.float()``,
``dtype=``, ``type_as``, an in-place copy into a float32 buffer), and the file and line in the
model's code that made it. When there is one, the keeping mode is tried, under the watch again:
used when the forward still runs and no cast is left; otherwise the check goes on in the model's
lowest precision, with a coarser step, and says so.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable

MAX_SITES = 4  # cast sites named in the result


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
                if func is torch.Tensor.type_as and args[1:] and _is_lower(args[1]):
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


@dataclass
class Precision:
    """What the gradient check learned about the model's own downcasts."""

    casts: list = field(default_factory=list)  # where float64 was cast down: "modeling_t5.py:65 .to(float32)"
    kept: bool = False  # the keeping mode removed every cast and the forward ran: float64 throughout
    lowest: str | None = None  # "float32" when a cast stays (keeping broke the forward): the precision checked at


def _is_lower(t) -> bool:
    import torch

    return isinstance(t, torch.Tensor) and _lower_float(t.dtype)


def _float64_in(values) -> bool:
    import torch

    for v in values:
        if isinstance(v, torch.Tensor) and v.dtype == torch.float64:
            return True
        if isinstance(v, (tuple, list)) and any(isinstance(x, torch.Tensor) and x.dtype == torch.float64 for x in v):
            return True
    return False


def _lower_out(out):
    """The lowest float dtype among a call's tensor results below float64, or None."""
    import torch

    items = out if isinstance(out, (tuple, list)) else (out,)
    lows = [x.dtype for x in items if _is_lower(x)]
    return min(lows, key=lambda d: torch.finfo(d).bits) if lows else None


def _site() -> str:
    """file:line of the innermost frame outside torch and this file: the model's line that cast."""
    here = os.path.abspath(__file__)
    torch_dir = os.sep + "torch" + os.sep
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if os.path.abspath(name) != here and torch_dir not in name:
            return f"{os.path.basename(name)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _watch(found: dict):
    """A mode that records, in ``found`` (site -> lowest dtype), every call turning float64 into a lower float."""
    from torch.overrides import TorchFunctionMode

    class WatchCasts(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            low = _lower_out(out)
            if low is not None and (_float64_in(args) or _float64_in(kwargs.values())):
                key = f"{_site()} {_call_words(func, low)}"
                if key not in found and len(found) < 64:
                    found[key] = low
            return out

    return WatchCasts()


def _call_words(func, low) -> str:
    """``.float()``, ``.to(float32)``, ``softmax() gives float32``: the cast as the model's code wrote it."""
    import torch

    name = getattr(func, "__name__", None) or str(func)
    dtype = str(low).replace("torch.", "")
    if getattr(torch.Tensor, name, None) is not func:
        return f"{name}() gives {dtype}"
    if name in ("float", "half", "bfloat16"):
        return f".{name}()"
    if name in ("to", "type", "type_as"):
        return f".{name}({dtype})"
    return f".{name}() gives {dtype}"


def _watched(loss_fn: Callable[[], Any]) -> tuple[Any, dict]:
    found: dict = {}
    with _watch(found):
        loss = loss_fn()
    return loss, found


def keep_double_if_needed(loss_fn: Callable[[], Any]) -> tuple[Callable[[], Any], Precision]:
    """(loss_fn, Precision()) when nothing in the forward or the loss casts float64 down; (the
    wrapped loss_fn, kept) when the keeping mode removes every cast and the forward still runs;
    (loss_fn, lowest set) when a cast stays: the check runs in that precision."""
    import torch

    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        try:
            loss, found = _watched(loss_fn)
        except Exception:  # let the check's own first call raise it where it is reported
            return loss_fn, Precision()
        lowest = min(found.values(), key=lambda d: torch.finfo(d).bits) if found else None
        if isinstance(loss, torch.Tensor) and _lower_float(loss.dtype):
            lowest = loss.dtype if lowest is None or torch.finfo(loss.dtype).bits < torch.finfo(lowest).bits else lowest
        if lowest is None:
            return loss_fn, Precision()
        casts = list(found)[:MAX_SITES]
        wrapped = keeping_double(loss_fn)
        try:
            kept, left = _watched(wrapped)
            float64 = not left and isinstance(kept, torch.Tensor) and kept.dtype == torch.float64
        except Exception:  # the model needs its cast (a float32-only kernel): stay in its precision
            float64 = False
    if float64:
        return wrapped, Precision(casts, kept=True)
    return loss_fn, Precision(casts, kept=False, lowest=str(lowest).replace("torch.", ""))
