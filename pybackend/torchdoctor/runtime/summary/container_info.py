"""``stats()`` of a list/tuple/dict, ``UserDict`` (``BatchEncoding``), record (dataclass,
``ModelOutput``) or KV cache (``DynamicCache``) holding tensors or arrays: counts, size, where
the NaN is.

Walks at most ``MAX_LEAVES`` tensors (nested containers included, up to ``MAX_DEPTH``) and
reports NaN/Inf by the top-level key, field or index that leads to them. Returns None when the
container holds no tensors, so the debugger keeps its own presentation for ordinary lists. A walk
cut by a bound says so (``complete`` False): its counts are then lower bounds.

Aliases count once: ``[t] * 10`` is 10 items but 1 distinct tensor, and memory is counted per
storage (two views of one buffer cost the buffer once), as it is in the program.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import sys
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Tuple

from ...spelling import clip, fmt_shape
from .aggregates import describe_array_cached
from .kinds import NDARRAY, TENSOR, is_kv_cache, is_leaf_kind, is_plain_container
from .tensor_info import describe_tensor

MAX_LEAVES = 256
MAX_DEPTH = 4  # a checkpoint {"model": state_dict, "optimizer": {"state": {0: {"exp_avg": t}}}} is walked whole
MAX_SCAN = 2000  # items looked at in all, tensors or not, nested containers included


def describe_container(obj: Any) -> Optional[Dict[str, object]]:
    found: List[Tuple[str, str, Dict[str, Any]]] = []
    sources: List[Any] = []
    direct = [0]  # top-level items that are tensors or arrays themselves
    complete = _walk(obj, found, [MAX_SCAN, MAX_SCALARS], sources=sources, direct=direct)
    if not found:
        return None
    leaves = [leaf for _, _, leaf in found]
    shapes = {tuple(leaf.get("shape") or ()) for leaf in leaves}
    distinct = len({id(item) for item in sources})
    info: Dict[str, object] = {
        "kind": "container",
        "type": type(obj).__name__,
        "len": _length(obj),
        "tensors": sum(1 for _, kind, _ in found if kind == TENSOR),
        "arrays": sum(1 for _, kind, _ in found if kind == NDARRAY),
        "nbytes": _distinct_bytes(sources, leaves),
        "dtypes": sorted({str(leaf["dtype"]) for leaf in leaves}),
        "devices": sorted({str(leaf["device"]) for leaf in leaves if leaf.get("device")}),
        "shape": list(shapes.pop()) if len(shapes) == 1 else None,
        "nan_in": _labels_with(found, "nan"),
        "inf_in": _labels_with(found, "posinf", "neginf"),
        "complete": complete,
        "direct": 0 if is_kv_cache(type(obj)) else direct[0],  # a cache's items are its layers
    }
    if distinct < len(sources):
        info["distinct"] = distinct
    return info


def _length(obj: Any) -> int:
    if is_kv_cache(type(obj)):
        return len(_cache_parts(obj))
    if isinstance(obj, collections.UserDict):
        return len(_user_dict_data(obj))
    try:
        return len(obj)
    except TypeError:  # a dataclass: its fields
        return len(dataclasses.fields(obj))


def _distinct_bytes(sources: List[Any], leaves: List[Dict[str, Any]]) -> int:
    """Bytes held, one count per storage: the largest extent any of its views reaches."""
    per_storage: Dict[Any, int] = {}
    for item, leaf in zip(sources, leaves):
        key, size = _storage_key(item, leaf)
        per_storage[key] = max(per_storage.get(key, 0), size)
    return sum(per_storage.values())


def _storage_key(item: Any, leaf: Dict[str, Any]) -> Tuple[Any, int]:
    size = int(leaf.get("stored_nbytes") or leaf.get("nbytes") or 0)
    try:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(item, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():  # a user subclass is not re-entered
                storage = item.untyped_storage()
                pointer, device, stored = storage.data_ptr(), str(item.device), int(storage.nbytes())
            if pointer:
                return ("storage", pointer, device), min(size, stored)
        base = getattr(item, "base", None)
        while base is not None and getattr(base, "base", None) is not None:
            base = base.base
        owner = base if base is not None else item
        pointer = owner.__array_interface__["data"][0] if hasattr(owner, "__array_interface__") else None
        if pointer:
            return ("array", pointer), size
    except Exception:
        pass
    return ("object", id(item)), size


def _walk(
    obj: Any,
    found: List,
    budget: List[int],
    label: Optional[str] = None,
    depth: int = 0,
    sources: Optional[List] = None,
    inside: FrozenSet[int] = frozenset(),
    direct: Optional[List[int]] = None,
) -> bool:
    """Collect ``(top-level label, kind, stats)`` per leaf; False when a bound cut the walk.

    ``budget`` is the shared count of items left to look at, so a list of lists of lists costs
    at most ``MAX_SCAN`` looks, not its size; plain values (a loss history) have their own count,
    ``MAX_SCALARS``, so a long list of numbers does not hide the tensors after it. ``inside``: the containers being walked
    (``obj``'s parents); one that holds itself is walked once, not once per level.
    """
    inside = inside | {id(obj)}
    complete = True
    for key, item in _items(obj):
        if isinstance(item, _SCALARS):  # a number holds no tensor: its own, larger count
            budget[1] -= 1
            if budget[1] < 0:
                return False
            continue
        if budget[0] <= 0 or len(found) >= MAX_LEAVES:
            return False
        budget[0] -= 1
        top = label if label is not None else key
        kind = is_leaf_kind(item)
        if kind is not None and sources is not None:
            sources.append(item)
        if kind is not None and direct is not None:
            direct[0] += 1
        if kind == TENSOR:
            found.append((top, kind, describe_tensor(item, with_grad=False)))
        elif kind == NDARRAY:
            found.append((top, kind, describe_array_cached(item)))  # cached, within the request's budget
        elif is_plain_container(type(item)) and id(item) not in inside:
            if depth + 1 >= MAX_DEPTH:
                complete = complete and not _may_hold(item)  # too deep to walk: not checked
            else:
                complete = _walk(item, found, budget, top, depth + 1, sources, inside) and complete
    return complete


# Looks :func:`_may_hold` may take below the depth bound, its own count: charged to the walk's
# budget, a deep list of numbers (a loss history) used it up and hid the tensors after it.
MAX_PEEK = 64
MAX_SCALARS = 10_000  # plain values skipped in all (a long loss history), before giving up
_SCALARS = (int, float, complex, str, bytes, bool, type(None))


def _may_hold(container: Any, peek: Optional[List[int]] = None, level: int = 0) -> bool:
    """Whether a container below the depth bound could hold a tensor. Plain values (the ``params``
    ids and ``betas`` of an optimizer's state_dict, a milestones list) surely do not; nor does a
    container of them, looked into one more level. At most ``MAX_PEEK`` looks at containers and
    ``MAX_SCALARS`` at plain values; past them, or for anything else, it may."""
    peek = [MAX_PEEK, MAX_SCALARS] if peek is None else peek
    for _, item in _items(container):
        if isinstance(item, _SCALARS):
            peek[1] -= 1
            if peek[1] < 0:
                return True
            continue
        peek[0] -= 1
        if peek[0] < 0 or is_leaf_kind(item) is not None or not is_plain_container(type(item)):
            return True
        if level >= 1 or _may_hold(item, peek, level + 1):
            return True
    return False


def _items(obj: Any) -> Iterator[Tuple[str, Any]]:
    if isinstance(obj, dict):
        for key, value in dict.items(obj):  # dict's own items: a subclass's override is not run
            yield _key_label(key), value
    elif isinstance(obj, collections.UserDict):
        for key, value in dict.items(_user_dict_data(obj)):
            yield _key_label(key), value
    elif is_kv_cache(type(obj)):
        yield from _cache_items(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for field in dataclasses.fields(obj):
            yield field.name, getattr(obj, field.name, None)
    else:
        for index, value in enumerate(obj):
            yield f"[{index}]", value


def _user_dict_data(obj: Any) -> Dict[Any, Any]:
    """What a ``UserDict`` stores (its ``data``, as its repr shows): read from the instance, so a
    subclass's ``__getitem__``/``__iter__`` (an LRU that reorders on access, a lazy dict that loads
    a shard) never runs on a hover; {} when ``data`` is not a dict."""
    data = _attribute(obj, "data")
    return data if isinstance(data, dict) else {}


def _cache_parts(cache: Any) -> List[Tuple[str, Any]]:
    """A KV cache's layers (or the two caches of an ``EncoderDecoderCache``), read from the
    instances' ``__dict__``: no property or method of the library runs."""
    fields = getattr(cache, "__dict__", None)
    if not isinstance(fields, dict):  # no __dict__ (slots): nothing to read without running its code
        return []
    if "self_attention_cache" in fields:
        return [(name, fields.get(name)) for name in ("self_attention_cache", "cross_attention_cache")]
    if isinstance(fields.get("layers"), list):  # recent releases: one object per layer
        return [(f"[{i}]", _layer_tensors(layer)) for i, layer in enumerate(fields["layers"])]
    keys, values = fields.get("key_cache") or [], fields.get("value_cache") or []  # older releases
    return [(f"[{i}]", pair) for i, pair in enumerate(zip(keys, values))]


def _layer_tensors(layer: Any) -> Tuple[Any, ...]:
    """The tensors a cache layer holds, from its ``__dict__`` and the dicts in it: keys and values,
    and every other float tensor (a linear-attention layer's ``conv_states``/``recurrent_states``,
    a quantized layer's residual keys...: a NaN in any of them is the cache's)."""
    try:
        fields = vars(layer)
    except TypeError:  # no __dict__ (slots): nothing to read without running its code
        return ()
    found = [fields.get("keys"), fields.get("values")]
    for name, value in fields.items():
        for item in dict.values(value) if isinstance(value, dict) else (value,):
            if name not in ("keys", "values") and _float_tensor(item):
                found.append(item)
    return tuple(item for item in found if is_leaf_kind(item) == TENSOR)


def _float_tensor(item: Any) -> bool:
    """A state tensor, not bookkeeping: a StaticCache layer's integer positions and lengths are
    not cached values."""
    try:
        return is_leaf_kind(item) == TENSOR and (item.dtype.is_floating_point or item.dtype.is_complex)
    except Exception:
        return False


def _attribute(obj: Any, name: str) -> Any:
    try:
        return vars(obj).get(name)
    except TypeError:  # no __dict__ (slots): nothing to read without running its code
        return None


def _cache_items(cache: Any) -> Iterator[Tuple[str, Any]]:
    """Per layer its keys and values, each under the layer's label: listed flat, so the tensors
    of a cache inside a model output inside an encoder-decoder cache are within the walk's depth."""
    for label, part in _cache_parts(cache):
        if isinstance(part, tuple):
            for tensor in part:
                yield label, tensor
        else:
            yield label, part


def _key_label(key: Any) -> str:
    """``'logits'`` for a string key. A tensor key (``optimizer.state`` is keyed by the
    Parameters) is named by type and shape: its repr would print its values, reading the whole
    tensor per hover, and run a subclass's ``__torch_function__``."""
    if is_leaf_kind(key) is not None:
        return _array_label(key)
    if not _plain_key(key):  # a user object's repr is its own code: it may be slow or print
        return f"<{type(key).__name__}>"
    try:
        return clip(repr(key), 40)
    except Exception:  # an int past Python's 4300-digit limit for str()
        return f"<{type(key).__name__}>"


# Key types whose repr is the interpreter's own: quick, no user code, no side effect.
_PLAIN_KEYS = (str, int, float, bool, type(None), bytes, complex)


def _plain_key(key: Any) -> bool:
    if type(key) is tuple:  # ``(layer, "k")``: plain when every part is
        return len(key) <= 8 and all(type(part) in _PLAIN_KEYS for part in key)
    return type(key) in _PLAIN_KEYS


def _array_label(key: Any) -> str:
    try:
        torch = sys.modules.get("torch")
        guard = torch._C.DisableTorchFunctionSubclass() if torch is not None else contextlib.nullcontext()
        with guard:
            return f"<{type(key).__name__}{fmt_shape([int(d) for d in key.shape])}>"
    except Exception:  # a lazy parameter has no shape yet
        return f"<{type(key).__name__}>"


def _labels_with(found: List, *fields: str) -> List[str]:
    labels: List[str] = []
    for label, _, leaf in found:
        if any(leaf.get(field) for field in fields) and label not in labels:
            labels.append(label)
    return labels
