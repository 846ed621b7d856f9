"""``torch.OutOfMemoryError`` explained: allocated vs reserved, the largest live tensors and the
names that hold them, and seed 000's fixes in order.

:func:`explain` runs once, when the error has reached the top (``torchdoctor run``, or the
``sys.excepthook`` the monitor chains in a debug session). The tensors are those the frames of
the traceback hold in their locals (their names are what you can ``del``), largest first.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from ...spelling import fmt_bytes, fmt_shape
from ..anomaly.frames import is_internal

FIXES = (
    "1. reduce the batch size (always the first thing to try)",
    "2. torch.cuda.empty_cache() to release the cached blocks",
    "3. `del` big intermediates you no longer need, then empty_cache()",
    "4. mixed precision (torch.autocast / AMP) to halve activation memory",
    "5. gradient checkpointing (torch.utils.checkpoint) for very deep models",
)
TOP = 5


def is_oom(torch: Any, exc: BaseException) -> bool:
    kind = getattr(torch, "OutOfMemoryError", None) or getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    return kind is not None and isinstance(exc, kind)


def explain(torch: Any, exc: BaseException, step: Optional[int] = None) -> Dict[str, Any]:
    memory = _memory(torch)
    held = largest(torch, exc.__traceback__)
    where = None
    tb = exc.__traceback__
    while tb is not None:
        if not is_internal(tb.tb_frame):
            where = {"path": os.path.abspath(tb.tb_frame.f_code.co_filename), "line": tb.tb_lineno}
        tb = tb.tb_next
    parts = [f"Out of memory: {str(exc).splitlines()[0][:200]}"]
    if memory:
        parts.append(
            f"CUDA allocated {fmt_bytes(memory['allocated'])}, reserved {fmt_bytes(memory['reserved'])}"
            + (f" of {fmt_bytes(memory['total'])}" if memory.get("total") else "")
            + (" (the cache holds much more than live tensors: empty_cache() may help)" if _cache_heavy(memory) else "")
        )
    if held:
        parts.append(
            "largest live tensors: "
            + ", ".join(
                f"`{name}` in {func}() {fmt_shape(shape)} {fmt_bytes(size)}" for size, name, func, shape in held
            )
        )
    parts.append("Fixes, in order: " + "; ".join(FIXES))
    return {
        "kind": "cuda_oom",
        "severity": "error",
        "step": step,
        "sentence": ". ".join(parts) + ".",
        "where": where,
        "series": "",
        "range": [step, step] if step is not None else None,
    }


def largest(torch: Any, tb: Any) -> List[Tuple[int, str, str, Tuple[int, ...]]]:
    found: Dict[int, Tuple[int, str, str, Tuple[int, ...]]] = {}
    while tb is not None:
        frame = tb.tb_frame
        if not is_internal(frame):
            for name, value in list(frame.f_locals.items()):
                if isinstance(value, torch.Tensor) and id(value) not in found:
                    size = value.element_size() * value.numel()
                    found[id(value)] = (size, name, frame.f_code.co_name, tuple(value.shape))
        tb = tb.tb_next
    return sorted(found.values(), key=lambda item: -item[0])[:TOP]


def _memory(torch: Any) -> Optional[Dict[str, int]]:
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is None or not cuda.is_initialized():
            return None
        total = int(cuda.get_device_properties(cuda.current_device()).total_memory)
        return {"allocated": int(cuda.memory_allocated()), "reserved": int(cuda.memory_reserved()), "total": total}
    except Exception:
        return None


def _cache_heavy(memory: Dict[str, int]) -> bool:
    return memory["reserved"] > 1.5 * max(memory["allocated"], 1)
