"""Tensors whose values cannot be read the ordinary way, and what to read instead.

A FakeTensor or a meta tensor has no data; an UninitializedParameter (a lazy module before its
first forward) has no shape yet; a tensor inside ``vmap``/``grad``/``jvp`` is a functorch wrapper
around a real tensor one level down; a DTensor holds a local shard; a MaskedTensor holds data and
a mask; a user subclass may override ``__torch_function__``. For each: the plain tensor whose
statistics are meaningful (or None) and a short note for the line.

Everything here runs under ``torch._C.DisableTorchFunctionSubclass()``, so reading a subclass's
attributes never re-enters its ``__torch_function__``.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, ContextManager, Optional, Tuple

_MAX_UNWRAP = 8  # nested transforms (vmap of grad of ...): more than this is not plausible


def plain_view(torch, t: Any) -> Tuple[Optional[Any], Optional[str]]:
    """``(tensor to read, note)``: the tensor whose values stand for ``t``'s, or None, and what
    the line should say about where they came from (None when they are ``t``'s own)."""
    if _is_uninitialized(torch, t):
        return None, "uninitialized (lazy: no shape until the first forward)"
    name = type(t).__name__
    if name == "FakeTensor" or _is_fake(t):
        return None, "fake (no data)"
    if _is_functorch(torch, t):
        return _functorch_inner(torch, t)
    local = getattr(t, "_local_tensor", None)
    if local is not None and hasattr(t, "placements"):
        return _plain(torch, local), f"local shard {list(local.shape)} of a DTensor"
    if name == "MaskedTensor" and hasattr(t, "get_mask"):
        return _masked_values(torch, t)
    if type(t) is torch.Tensor or type(t) is torch.nn.Parameter:
        return t, None
    jagged = jagged_values(torch, t)
    if jagged is not None:
        return jagged, None  # every element, none of them padding: the tensor's own statistics
    return _plain(torch, t), None


def jagged_values(torch, t: Any) -> Optional[Any]:
    """The packed values of a jagged nested tensor (``layout=torch.jagged``), or None. Its
    ``as_subclass`` copy is refused ("aten.alias"), but its elements are one plain tensor. None
    too when it has ``_lengths`` (``torch.nested.narrow``): its rows are then windows of a padded
    buffer, and the buffer's padding is no element of it."""
    if getattr(t, "layout", None) != getattr(torch, "jagged", object()):
        return None
    if vars(t).get("_lengths") is not None:
        return None
    values = getattr(t, "_values", None)
    return values if type(values) is torch.Tensor else None


def _plain(torch, t: Any) -> Any:
    """The same data as a plain ``torch.Tensor``, so no subclass code runs while we read it."""
    if type(t) is torch.Tensor:
        return t
    return t.as_subclass(torch.Tensor)


def _is_uninitialized(torch, t: Any) -> bool:
    lazy = getattr(torch.nn.parameter, "UninitializedTensorMixin", None)
    return lazy is not None and isinstance(t, lazy)


def _is_fake(t: Any) -> bool:
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    return fake is not None and isinstance(t, getattr(fake, "FakeTensor", ()))


def _is_functorch(torch, t: Any) -> bool:
    functorch = getattr(torch._C, "_functorch", None)
    check = getattr(functorch, "is_functorch_wrapped_tensor", None)
    try:
        return bool(check(t)) if check is not None else False
    except Exception:
        return False


def outside_transforms(torch, t: Any, plain: Any) -> ContextManager[Any]:
    """Where the statistics of a tensor inside vmap/grad/jvp are read: with the transforms'
    interpreter stack set aside, so our reductions of the unwrapped tensor are plain ops (under
    torch 2.8 their results were wrapped again and ``tolist`` failed: "Cannot access data pointer
    of Tensor that doesn't have storage"). Any other tensor: nothing changes. ``plain``: what
    ``plain_view`` gave; the common case, ``t`` read as it is, is told apart without asking torch."""
    if plain is None or plain is t or not _is_functorch(torch, t):
        return contextlib.nullcontext()
    pyfunctorch = sys.modules.get("torch._functorch.pyfunctorch")  # loaded by any transform
    clear = getattr(pyfunctorch, "temporarily_clear_interpreter_stack", None)
    return clear() if clear is not None else contextlib.nullcontext()


def _functorch_inner(torch, t: Any) -> Tuple[Optional[Any], Optional[str]]:
    """The real tensor below the vmap/grad/jvp wrappers; a vmap batch is read whole."""
    functorch = torch._C._functorch
    inner, batched = t, False
    for _ in range(_MAX_UNWRAP):
        if not functorch.is_functorch_wrapped_tensor(inner):
            break
        batched = batched or bool(getattr(functorch, "is_batchedtensor", lambda _: False)(inner))
        inner = functorch.get_unwrapped(inner)
    else:
        return None, "inside a functorch transform (wrapped too deep to read)"
    if batched:
        return inner, f"inside vmap: statistics over the whole batch {list(inner.shape)}"
    return inner, "inside a functorch transform (grad/jvp): statistics of the wrapped tensor"


def _masked_values(torch, t: Any) -> Tuple[Optional[Any], Optional[str]]:
    """Only the unmasked values: ``torch.masked`` means the others do not exist."""
    data, mask = t.get_data(), t.get_mask()
    if data.layout != torch.strided:
        return None, "masked (sparse): no statistics"
    kept = data.masked_select(mask.expand_as(data)) if mask.shape != data.shape else data.masked_select(mask)
    return kept, f"masked: statistics of {kept.numel()} unmasked of {data.numel()}"


def layout_words(torch, t: Any) -> dict:
    """Memory-layout facts worth a word on the line: non-contiguous, channels_last, expanded."""
    out: dict = {}
    if t.layout != torch.strided or t.is_nested or t.dim() < 2 or t.numel() <= 1:
        return out
    if t.is_contiguous() or 0 in t.stride():
        return out  # expanded (stride 0): the line says expanded×N already
    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last):
        out["memory_format"] = "channels_last"
    elif t.dim() == 5 and t.is_contiguous(memory_format=torch.channels_last_3d):
        out["memory_format"] = "channels_last_3d"
    else:
        out["contiguous"] = False
    return out


def quantization(t: Any) -> Optional[dict]:
    """Scale and zero point of a quantized tensor (per tensor), or the per-channel axis."""
    if not getattr(t, "is_quantized", False):
        return None
    scheme = str(t.qscheme()).replace("torch.", "")
    if "per_tensor" in scheme:
        return {"scheme": scheme, "scale": float(t.q_scale()), "zero_point": int(t.q_zero_point())}
    return {"scheme": scheme, "axis": int(t.q_per_channel_axis())}
