"""Which kind of object this is, decided without importing torch or numpy.

If the program never imported torch, nothing it holds can be a tensor: ``sys.modules`` says so
at no cost, and the debugger pays nothing for summaries of programs that do not use them.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import weakref
from typing import Any, Optional

TENSOR = "tensor"
MODULE = "module"
NDARRAY = "ndarray"
CONTAINER = "container"
CONFIG = "config"  # a model's configuration (Hugging Face ``PretrainedConfig``)
TRAINING = "training"  # an optimizer, LR scheduler, DataLoader, dataset, sampler, GradScaler or Generator

_CONTAINER_TYPES = (list, tuple, dict, collections.OrderedDict, collections.defaultdict)


def classify(obj: Any) -> Optional[str]:
    """``"tensor"``, ``"module"``, ``"ndarray"``, ``"training"`` (:func:`training_kind`),
    ``"config"``, ``"container"`` or None (not ours)."""
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
    cls = type(obj)
    if is_model_config(cls):  # before containers: transformers 5's configs are dataclasses
        return CONFIG
    container = is_plain_container(cls)
    if training_kind(cls) is not None and not container:  # a dataclass dataset: its tensors' line (NaN shown)
        return TRAINING
    if container:
        return CONTAINER
    return None


# (module, class) of each training object the summary describes, by what it is; looked up in
# sys.modules: none is imported here (importing torch imports them all).
_TRAINING_BASES = (
    ("optimizer", "torch.optim", "Optimizer"),
    ("scheduler", "torch.optim.lr_scheduler", "LRScheduler"),
    ("scheduler", "torch.optim.lr_scheduler", "ReduceLROnPlateau"),  # not an LRScheduler before torch 2.2
    ("dataloader", "torch.utils.data", "DataLoader"),
    ("sampler", "torch.utils.data", "Sampler"),
    (
        "dataset",
        "torch.utils.data",
        "Dataset",
    ),  # IterableDataset is one (and an ABC: issubclass of it walks its subclasses)
    ("grad_scaler", "torch.amp", "GradScaler"),
    ("grad_scaler", "torch.cuda.amp", "GradScaler"),
    ("generator", "torch", "Generator"),
)


def training_kind(cls: type) -> Optional[str]:
    """``"optimizer"``, ``"scheduler"``, ``"dataloader"``, ``"sampler"``, ``"dataset"``,
    ``"grad_scaler"``, ``"generator"`` (subclasses included), or None. Asked for every variable
    the debugger shows: cached per type once torch's modules are all imported (before that, an
    answer could still change)."""
    if "torch" not in sys.modules:
        return None
    if "torch.utils.data" not in sys.modules or "torch.optim" not in sys.modules:
        return _training_kind(cls)
    return _per_type(_TRAINING_KINDS, cls, _training_kind)


def _training_kind(cls: type) -> Optional[str]:
    try:
        for what, module_name, name in _TRAINING_BASES:
            base = getattr(sys.modules.get(module_name), name, None)
            if isinstance(base, type) and issubclass(cls, base):
                return what
    except Exception:
        pass
    return None


def is_training_object(cls: type) -> bool:
    """Whether values of ``cls`` get a training object's line (:func:`training_kind`)."""
    return isinstance(cls, type) and training_kind(cls) is not None


def is_plain_container(cls: type) -> bool:
    """list/tuple/dict and their standard variants (namedtuple, OrderedDict, defaultdict), and
    records of tensors: dataclasses and Hugging Face ``ModelOutput`` (a dict and a dataclass).

    Other subclasses (``torch.Size``, user classes with their own ``__repr__``) keep theirs; a
    record holding no tensor keeps its own presentation too (the summary is None for it).
    """
    return bool(_per_type(_CONTAINERS, cls, _is_plain_container))


def _is_plain_container(cls: type) -> bool:
    if cls in _CONTAINER_TYPES or (issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return True
    if issubclass(cls, tuple) and hasattr(cls, "n_sequence_fields"):
        return True  # a C struct sequence: ``torch.max(x, dim=1)``, ``torch.sort``, ``topk``
    return is_user_dict(cls) or is_record(cls) or is_kv_cache(cls)


# Answers per type: each item of a walked container asks, and the MRO scans cost ~1 µs (a
# 10,000-int list walked 1.5x slower with them); a type's answer never changes. Weakly keyed: a
# class made at run time (a mock, a dynamic record) is not kept alive by having been shown.
_CONTAINERS: "weakref.WeakKeyDictionary[type, Any]" = weakref.WeakKeyDictionary()
_TRAINING_KINDS: "weakref.WeakKeyDictionary[type, Any]" = weakref.WeakKeyDictionary()
_CONFIGS: "weakref.WeakKeyDictionary[type, Any]" = weakref.WeakKeyDictionary()


def _per_type(cache: "weakref.WeakKeyDictionary[type, Any]", cls: type, compute: Any) -> Any:
    try:
        return cache[cls]
    except KeyError:
        pass
    except TypeError:  # not weakly referenceable, or an unhashable metaclass: not kept
        return compute(cls)
    answer = compute(cls)
    try:
        cache[cls] = answer
    except TypeError:
        pass
    return answer


# Hugging Face's config base class, by name as ``ModelOutput`` is: ``PretrainedConfig`` in 4.x,
# ``PreTrainedConfig`` in 5.x (which keeps the old name as an alias of the same class).
_CONFIG_BASES = ("PretrainedConfig", "PreTrainedConfig")


def is_model_config(cls: type) -> bool:
    """A model's configuration class (``BertConfig``): its line names its sizes (:mod:`.config_info`)."""
    return bool(_per_type(_CONFIGS, cls, _is_model_config))


def _is_model_config(cls: type) -> bool:
    try:
        return any(base.__name__ in _CONFIG_BASES for base in cls.__mro__)
    except Exception:
        return False


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
