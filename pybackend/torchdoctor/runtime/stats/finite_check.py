"""Which of many small tensors surely hold no NaN/Inf, in one op and one host transfer.

A model's NaN/Inf walk (``summary/aggregates.py``) reads hundreds or thousands of parameters
and gradients, most of them small; their full statistics one by one cost ~0.2 ms each (a few
ops and a host transfer per tensor), so a 500-parameter model took most of a Variables page's
budget before any value was shown. ``torch._foreach_norm`` takes the 2-norm of a whole list in
one call, and the norms cross to the host together.

A finite norm proves the tensor finite: a NaN makes the sum of squares NaN and an Inf makes it
Inf. A norm that is not finite proves nothing (finite values whose squares overflow, |x| > 1e19
in float32, or a float16 tensor whose norm passes 65504): those tensors are answered None and
the caller checks them exactly (their statistics count NaN, +Inf and -Inf). So a tensor is
never called clean when it is not, and never called bad on the norm's word alone.

Only plain strided tensors of floating or complex dtype, at most :data:`BATCH_ELEMENTS` each,
are batched (one chunk stays well under a millisecond); anything else is answered None.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

# One tensor at most this many elements is batched; bigger ones take the exact, abortable path.
BATCH_ELEMENTS = 1 << 16


def batchable(torch, t: Any) -> bool:
    """A plain dense float/complex tensor small enough to batch (no subclass: no user code runs)."""
    try:
        return (
            type(t) in (torch.Tensor, torch.nn.Parameter)
            and t.layout == torch.strided
            and not t.is_meta
            and not t.is_quantized
            and 0 < t.numel() <= BATCH_ELEMENTS
            and (t.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64) or t.dtype.is_complex)
        )
    except Exception:
        return False


def surely_finite(torch, tensors: List[Any]) -> List[Optional[bool]]:
    """Per tensor: True when it holds no NaN/Inf, None when that is not proven here."""
    out: List[Optional[bool]] = [None] * len(tensors)
    norm = getattr(torch, "_foreach_norm", None)
    if norm is None:
        return out
    groups: Dict[Tuple[Any, Any], List[int]] = {}
    for i, t in enumerate(tensors):
        if batchable(torch, t):
            groups.setdefault((t.dtype, t.device), []).append(i)
    for members in groups.values():
        try:
            with torch.no_grad():
                norms = norm([tensors[i] for i in members])
                values = torch.stack(list(norms)).tolist()
        except Exception:
            continue  # e.g. a dtype without a norm kernel on this device: checked exactly
        for i, value in zip(members, values):
            if math.isfinite(value):
                out[i] = True
    return out
