"""Who keeps every step alive: a list in the user's frames that holds tensors with their graphs.

Asked once, when the memory-growth verdict fires (off the fast path): the user's frames from
the training loop outwards, their locals (and a script's globals), for a list or deque of at
least ``MIN_ITEMS`` items whose last item is a tensor that requires grad (a loss kept with
``losses.append(loss)`` instead of ``loss.item()``, TD007 at run time).
"""

from __future__ import annotations

import os
from typing import Any

from ..anomaly.frames import is_internal

MIN_ITEMS = 10


def holder(torch: Any, frame: Any) -> str:
    try:
        while frame is not None:
            if not is_internal(frame):
                found = _scan(torch, frame)
                if found:
                    return found
            frame = frame.f_back
    except Exception:
        return ""
    return ""


def _scan(torch: Any, frame: Any) -> str:
    spaces = [frame.f_locals]
    if frame.f_code.co_name == "<module>":
        spaces = [frame.f_globals]
    for space in spaces:
        for name, value in list(space.items()):
            if not isinstance(value, list) or len(value) < MIN_ITEMS:
                continue
            last = value[-1]
            if isinstance(last, torch.Tensor) and (last.requires_grad or last.grad_fn is not None):
                where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
                return (
                    f"`{name}` in {frame.f_code.co_name}() ({where}) is a list of {len(value)} tensors that "
                    "keep their autograd graphs (TD007)"
                )
    return ""
