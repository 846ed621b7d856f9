"""What the collection notes about the values a module receives and returns.

Hot path (every module call): :func:`leaves` keeps ``(shape, dtype, device, requires_grad)``
of at most :data:`MAX_LEAVES` tensors (and the type names of other leaves) of a nested
argument or output, by reference to torch's own immutable objects: nothing is formatted,
copied or reduced. :func:`first_tensor` picks the tensor whose values the snapshot describes.

Snapshot time: :func:`leaf_json` turns the notes into JSON.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

MAX_LEAVES = 8  # per argument list / output: enough for (x, mask, ...) and LSTM's (out, (h, c))
MAX_DEPTH = 3  # nesting followed into tuples, lists and dicts


def leaves(value: Any, tensor_type: Any, out: Optional[list] = None, depth: int = 0) -> list:
    """``[(shape, dtype, device, requires_grad) | "typename", ...]`` of a (nested) value."""
    if out is None:
        out = []
    if len(out) >= MAX_LEAVES:
        return out
    if isinstance(value, tensor_type):
        out.append((value.shape, value.dtype, value.device, value.requires_grad))
    elif isinstance(value, (tuple, list)) and depth < MAX_DEPTH:
        for item in value:
            leaves(item, tensor_type, out, depth + 1)
            if len(out) >= MAX_LEAVES:
                break
    elif isinstance(value, dict) and depth < MAX_DEPTH:
        for item in value.values():
            leaves(item, tensor_type, out, depth + 1)
            if len(out) >= MAX_LEAVES:
                break
    else:
        out.append(type(value).__name__)
    return out


def first_tensor(value: Any, tensor_type: Any, depth: int = 0) -> Any:
    """The first tensor of a (nested) value, or None."""
    if isinstance(value, tensor_type):
        return value
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, (tuple, list)):
        items = value[:MAX_LEAVES]
    elif isinstance(value, dict):
        items = list(value.values())[:MAX_LEAVES]
    else:
        return None
    for item in items:
        found = first_tensor(item, tensor_type, depth + 1)
        if found is not None:
            return found
    return None


def keepable(t: Any) -> bool:
    """A dense tensor with values we can describe later (not meta, sparse or a fake)."""
    torch = sys.modules["torch"]
    return t.layout == torch.strided and not t.is_meta and type(t) in (torch.Tensor, torch.nn.Parameter)


def nbytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def leaf_json(leaf: Any) -> dict:
    """``{"shape": [8, 3, 32, 32], "dtype": "float32", "device": "cpu", "requiresGrad": false}``
    for a tensor, ``{"type": "int"}`` for anything else."""
    if isinstance(leaf, tuple):
        shape, dtype, device, requires_grad = leaf
        return {
            "shape": [int(d) for d in shape],
            "dtype": dtype_name(dtype),
            "device": str(device),
            "requiresGrad": bool(requires_grad),
        }
    return {"type": str(leaf)}
