"""``stats()`` of an ``nn.Module``: layers, parameter count, devices, dtypes, mode, and NaN/Inf.

Parameter values are checked through the same identity cache as tensor summaries, so hovering
the model after hovering its weights (or stopping twice) costs nothing. Very large models skip
the value check rather than stall the debugger; ``stats()["checked"]`` says so.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Dict, List

from ...spelling import short_dtype
from ..stats.cache import VALUE_STATS
from ..stats.fingerprint import fingerprint
from ..stats.tensor_stats import value_stats

# Above this many parameter elements, a first hover would take seconds: skip the value check.
CHECK_LIMIT = 200_000_000


def describe_module(module: Any) -> Dict[str, object]:
    torch = sys.modules["torch"]
    with torch.no_grad():
        named = list(module.named_parameters())
        # Lazy modules hold UninitializedParameters until their first forward: no shape yet.
        params = [(n, p) for n, p in named if not _uninitialized(torch, p)]
        buffers = [b for _, b in module.named_buffers() if not _uninitialized(torch, b)]
        tensors = [p for _, p in params] + buffers
        total = sum(int(p.numel()) for _, p in params)
        info: Dict[str, object] = {
            "kind": "module",
            "type": type(module).__name__,
            "layers": _count_layers(module),
            "params": total,
            "trainable": sum(int(p.numel()) for _, p in params if p.requires_grad),
            "nbytes": sum(int(t.numel() * t.element_size()) for t in tensors),
            "devices": sorted({str(t.device) for t in tensors}),
            "dtypes": sorted({short_dtype(str(p.dtype)) for _, p in params}),
            "training": bool(module.training),
            "other_mode": sum(1 for m in module.modules() if m.training != module.training),
        }
        if len(params) < len(named):
            info["uninitialized"] = len(named) - len(params)
        info["checked"] = total <= CHECK_LIMIT
        if info["checked"]:
            info["nan_in"] = _bad_names(torch, params, grads=False)
            info["grad_nan_in"] = _bad_names(torch, params, grads=True)
    return info


def _uninitialized(torch, t: Any) -> bool:
    lazy = getattr(torch.nn.parameter, "UninitializedTensorMixin", None)
    return lazy is not None and isinstance(t, lazy)


def _count_layers(module: Any) -> int:
    """Leaf modules that own parameters (Linear, Conv, norms); activations do not count."""
    count = 0
    for sub in module.modules():
        if next(sub.children(), None) is None and next(sub.parameters(recurse=False), None) is not None:
            count += 1
    return count


def _bad_names(torch, params: List, grads: bool) -> List[str]:
    """Names of parameters (or of their grads) holding any NaN or Inf."""
    bad = []
    for name, p in params:
        t = p.grad if grads else p
        if t is None or not _checkable(torch, t):
            continue
        stats = VALUE_STATS.get_or_compute(t, fingerprint(t), functools.partial(value_stats, t))
        if stats.get("nan") or stats.get("posinf") or stats.get("neginf"):
            bad.append(name)
    return bad


def _checkable(torch, t: Any) -> bool:
    return (
        t.layout == torch.strided
        and not t.is_meta
        and t.numel() > 0
        and (t.dtype.is_floating_point or t.dtype.is_complex)
    )
