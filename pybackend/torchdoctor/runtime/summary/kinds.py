"""Which kind of object this is, decided without importing torch or numpy.

If the program never imported torch, nothing it holds can be a tensor: ``sys.modules`` says so
at no cost, and the debugger pays nothing for summaries of programs that do not use them.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
from typing import Any, Optional

TENSOR = "tensor"
MODULE = "module"
NDARRAY = "ndarray"
CONTAINER = "container"

_CONTAINER_TYPES = (list, tuple, dict, collections.OrderedDict, collections.defaultdict)


def classify(obj: Any) -> Optional[str]:
    """``"tensor"``, ``"module"``, ``"ndarray"``, ``"container"`` or None (not ours)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(obj, torch.Tensor):
            return TENSOR
        nn = sys.modules.get("torch.nn")
        if nn is not None and isinstance(obj, nn.Module):
            return MODULE
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return NDARRAY
    if is_plain_container(type(obj)):
        return CONTAINER
    return None


def is_plain_container(cls: type) -> bool:
    """list/tuple/dict and their standard variants (namedtuple, OrderedDict, defaultdict), and
    records of tensors: dataclasses and Hugging Face ``ModelOutput`` (a dict and a dataclass).

    Other subclasses (``torch.Size``, user classes with their own ``__repr__``) keep theirs; a
    record holding no tensor keeps its own presentation too (the summary is None for it).
    """
    if cls in _CONTAINER_TYPES or (issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return True
    return is_user_dict(cls) or is_record(cls) or is_kv_cache(cls)


def is_user_dict(cls: type) -> bool:
    """A ``collections.UserDict``: Hugging Face's ``BatchEncoding`` (a tokenizer's output, the
    batch of most training loops) and ``BatchFeature`` are ones."""
    try:
        return issubclass(cls, collections.UserDict)
    except Exception:
        return False


def is_kv_cache(cls: type) -> bool:
    """A Hugging Face ``Cache`` (``DynamicCache``, ``EncoderDecoderCache``: a model output's
    ``past_key_values``), known by name as ``ModelOutput`` is."""
    try:
        return any(base.__name__ == "Cache" and base.__module__.startswith("transformers") for base in cls.__mro__)
    except Exception:
        return False


def is_record(cls: type) -> bool:
    """A dataclass type, or a ``ModelOutput`` (by name: transformers is never imported here)."""
    try:
        if any(base.__name__ == "ModelOutput" for base in cls.__mro__):
            return True
        return dataclasses.is_dataclass(cls) and isinstance(cls, type)
    except Exception:
        return False


def is_leaf_kind(obj: Any) -> Optional[str]:
    """``"tensor"`` or ``"ndarray"`` for the array leaves a container summary counts."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return TENSOR
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return NDARRAY
    return None
