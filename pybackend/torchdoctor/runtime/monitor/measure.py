"""What the recorder reads each step: gradient norms, update ratios, RSS, CUDA memory.

Every tensor result stays on its device (0-d tensors); the recorder packs a step's scalars into
one tensor and reads them once (:class:`recorder.Monitor`), so none of these functions syncs.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, Dict, List, Optional, Tuple

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_STATM: List[Optional[int]] = []


def rss() -> Optional[int]:
    """Resident memory of this process in bytes (Linux ``/proc/self/statm``), else None."""
    if not _STATM:
        try:
            _STATM.append(os.open("/proc/self/statm", os.O_RDONLY))
        except OSError:
            _STATM.append(None)
    fd = _STATM[0]
    if fd is None:
        return None
    try:
        return int(os.pread(fd, 64, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def reset_rss_file() -> None:
    """A forked child must not share the parent's descriptor position (pread has none, but tidy)."""
    _STATM.clear()


def cuda_memory(torch: Any) -> Optional[dict]:
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_initialized():
        return None
    try:
        return {
            "allocated": int(cuda.memory_allocated()),
            "reserved": int(cuda.memory_reserved()),
            "peak": int(cuda.max_memory_allocated()),
        }
    except Exception:
        return None


def params_of(optimizer: Any, cache: "weakref.WeakKeyDictionary[Any, Any]") -> List[Any]:
    """The optimizer's parameters, listed again only when its param groups change.

    ``cache`` is keyed by the optimizer itself, weakly: an entry (and the parameters it lists)
    goes with its optimizer, so a sweep's deleted models are freed, and a new optimizer that
    reuses a dead one's ``id`` never gets its parameters."""
    groups = optimizer.param_groups
    key = tuple((id(g["params"]), len(g["params"])) for g in groups)
    try:
        kept = cache.get(optimizer)
    except TypeError:  # an optimizer that takes no weak reference: listed each time
        return [p for g in groups for p in g["params"]]
    if kept is None or kept[0] != key:
        kept = cache[optimizer] = (key, [p for g in groups for p in g["params"]])
    return kept[1]


def grads_of(params: List[Any]) -> List[Any]:
    return [g for p in params if (g := p.grad) is not None and not g.is_sparse]


def total_norm(torch: Any, tensors: List[Any]) -> Any:
    """The global 2-norm of ``tensors`` as a 0-d tensor on the first one's device.

    One ``_foreach_norm`` and one norm of the stacked norms; tensors on several devices (the
    stack refuses them) are taken one by one instead."""
    if not tensors:
        return None
    try:
        norms = torch._foreach_norm(tensors)
        if len(norms) == 1:
            return norms[0]
        return torch.linalg.vector_norm(torch.stack(norms), dtype=torch.float32)
    except RuntimeError:
        device = tensors[0].device
        norms = [torch.linalg.vector_norm(t).to(device) for t in tensors]
        return torch.linalg.vector_norm(torch.stack(norms), dtype=torch.float32)


def _trained(torch: Any, group: Dict[str, Any]) -> List[Any]:
    """A group's parameters that are trained and have a value: a lazy one (``LazyLinear`` not
    called yet) has none to copy or compare, and is left out."""
    is_lazy = torch.nn.parameter.is_lazy
    return [p for p in group["params"] if p.requires_grad and not is_lazy(p)]


def snapshot(torch: Any, optimizer: Any) -> List[Tuple[List[Any], List[Any]]]:
    """For the update ratio, per group: its trained parameters and a copy of each."""
    out = []
    for group in optimizer.param_groups:
        params = _trained(torch, group)
        out.append((params, [p.detach().clone() for p in params]))
    return out


def update_ratios(torch: Any, before: List[Tuple[List[Any], List[Any]]]) -> List[Any]:
    """||w_after - w_before|| / ||w_after|| per param group (:func:`snapshot`'s), as 0-d tensors
    (None for a group with no trained parameter with a value)."""
    out: List[Any] = []
    for params, old in before:
        if not params:
            out.append(None)
            continue
        now = [p.detach() for p in params]
        delta = total_norm(torch, torch._foreach_sub(now, old))
        weight = total_norm(torch, now)
        out.append(delta / weight.clamp_min(1e-30))
    return out


def batch_size(torch: Any, inputs: Any) -> Optional[int]:
    """The first dimension of the first tensor in a module's inputs or a DataLoader's batch."""
    stack = [inputs]
    seen = 0
    while stack and seen < 16:
        item = stack.pop(0)
        seen += 1
        if isinstance(item, torch.Tensor):
            return int(item.shape[0]) if item.dim() > 0 else None
        if isinstance(item, (tuple, list)):
            stack.extend(item[:4])
        elif isinstance(item, dict):
            stack.extend(list(item.values())[:4])
    return None
