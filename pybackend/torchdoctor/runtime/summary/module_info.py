"""``stats()`` of an ``nn.Module``: what it is made of, its parameters, devices, dtypes, mode, NaN/Inf.

What is counted, and how (the one line reads ``GPT 4 blocks, 55 modules, 834K params cpu train``):

- ``params``: every parameter element once *by storage*: a weight tied to another
  (``lm_head.weight = wte.weight``, or two Parameters over the same memory) counts once. The
  shape trace (``runtime/collect/snapshot.py``) counts with the same key, so both say the
  same number.
- ``modules``: the submodules below this one, each once; the machinery of parametrizations
  (``weight_norm``/``spectral_norm``: the ``parametrizations`` dict and what it holds) is part
  of the module it parametrizes, not a module of the model.
- quantized layers (``quantize_dynamic``, ``convert``) keep their weights packed, outside
  parameters and buffers: they are not in ``params`` and the line says how many such layers
  there are; their packed-weights holder is not counted as a module.
- ``blocks``: the repeated children of the trunk: the ``ModuleList``/``Sequential`` whose
  children (two or more, of one class, each made of submodules) hold the most parameters
  (``transformer.h`` of a GPT). Absent when the model has no such stack. A model of several
  towers (CLIP's text and vision encoders, Whisper's encoder and decoder) has a stack in each:
  ``blocks`` is their total and ``stacks`` each one's, in the model's order (``2+2 blocks``).
  Sibling stacks of one block class are stages of one trunk (ResNet's ``layer1``..``layer4``).

Values (parameters and floating buffers, so a NaN in a BatchNorm's ``running_mean`` shows) are
checked through the same identity cache as tensor summaries, so hovering the model after its
weights (or stopping twice) costs nothing. Very large models skip the value check rather than
stall the debugger; ``stats()["checked"]`` says so.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Dict, Hashable, Iterable, List, Optional, Set, Tuple

from ...spelling import fmt_count, short_dtype
from ..stats.budget import cut_walk
from ..stats.cache import VALUE_STATS
from ..stats.fingerprint import fingerprint
from ..stats.tensor_stats import value_stats

# Above this many parameter elements, a first hover would take seconds: skip the value check.
CHECK_LIMIT = 200_000_000

WARN = "⚠"


def storage_key(t: Any) -> Hashable:
    """Two tensors with the same key hold the same elements (tied weights count once).

    The memory, offset, shape and strides; tensors with no memory to compare (meta, lazy,
    empty, or whose storage cannot be read) are keyed by identity.
    """
    try:
        ptr = t.untyped_storage().data_ptr()
        if ptr:
            return ("storage", ptr, int(t.storage_offset()), tuple(t.shape), tuple(t.stride()))
    except Exception:
        pass
    return ("id", id(t))


def unique_parameters(named: Iterable[Tuple[str, Any]]) -> List[Tuple[str, Any]]:
    """``named`` without the parameters whose storage was seen already (first name wins)."""
    seen: Set[Hashable] = set()
    out = []
    for name, p in named:
        key = storage_key(p)
        if key not in seen:
            seen.add(key)
            out.append((name, p))
    return out


Named = List[Tuple[str, Any]]


def module_tensors(torch, module: Any) -> Tuple[Named, Named, Named]:
    """``(every named parameter, the initialized ones once by storage, the initialized buffers)``:
    what :func:`describe_module` counts and checks, enumerated once (a model's walk,
    ``summary/aggregates.py``, reuses them instead of walking the model again)."""
    named = list(module.named_parameters())
    # Lazy modules hold UninitializedParameters until their first forward: no shape yet.
    params = unique_parameters((n, p) for n, p in named if not _uninitialized(torch, p))
    buffers = [(n, b) for n, b in module.named_buffers() if not _uninitialized(torch, b)]
    return named, params, buffers


def describe_module(
    module: Any, check: bool = True, tensors: Optional[Tuple[Named, Named, Named]] = None
) -> Dict[str, object]:
    """``check=False``: everything but the NaN/Inf walk (``summary/aggregates.py`` runs it in steps
    that fit in the debugger's requests). ``tensors``: :func:`module_tensors` of ``module``, if
    the caller has them already."""
    torch = sys.modules["torch"]
    with torch.no_grad():
        named, params, buffers = module_tensors(torch, module) if tensors is None else tensors
        tensors_held = [p for _, p in params] + [b for _, b in buffers]
        total = sum(int(p.numel()) for _, p in params)
        modules = model_modules(torch, module)
        stacks = trunk_stacks(torch, module, modules)
        info: Dict[str, object] = {
            "kind": "module",
            "type": type(module).__name__,
            "modules": len(modules) - 1,
            "blocks": sum(stacks) if stacks else None,
            "params": total,
            "trainable": sum(int(p.numel()) for _, p in params if p.requires_grad),
            "nbytes": sum(int(t.numel() * t.element_size()) for t in tensors_held),
            "devices": sorted({str(t.device) for t in tensors_held}),
            "dtypes": sorted({short_dtype(str(p.dtype)) for _, p in params}),
            "training": bool(module.training),
            "other_mode": sum(1 for m in modules if m.training != module.training),
        }
        if len(stacks) > 1:
            info["stacks"] = stacks
        lazy = sum(1 for _, p in named if _uninitialized(torch, p))
        if lazy:
            info["uninitialized"] = lazy
        quantized = sum(1 for m in modules if _packed_weights(m))
        if quantized:
            info["quantized"] = quantized
        info["checked"] = total <= CHECK_LIMIT
        if info["checked"] and check:
            info["nan_in"] = _bad_names(torch, params + buffers, grads=False)
            info["grad_nan_in"] = _bad_names(torch, params, grads=True)
    return info


def _uninitialized(torch, t: Any) -> bool:
    lazy = getattr(torch.nn.parameter, "UninitializedTensorMixin", None)
    return lazy is not None and isinstance(t, lazy)


def model_modules(torch, root: Any) -> List[Any]:
    """``root`` and its submodules, each once, without the parametrizations' own modules."""
    hidden: Set[int] = set()
    out = []
    for m in root.modules():
        if id(m) in hidden:
            continue
        out.append(m)
        inner = _parametrizations(torch, m)
        if inner is not None:
            hidden.update(id(x) for x in inner.modules())
        packed = getattr(m, "_packed_params", None) if _packed_weights(m) else None
        if isinstance(packed, torch.nn.Module):  # the holder of a quantized layer's weights
            hidden.add(id(packed))
    return out


# Where torch keeps its quantized layers: plain, fused (``ConvReLU2d`` after ``fuse_modules``) and sparse.
_QUANTIZED_PACKAGES = (
    "torch.ao.nn.quantized",
    "torch.nn.quantized",
    "torch.ao.nn.intrinsic.quantized",
    "torch.nn.intrinsic.quantized",
    "torch.ao.nn.sparse.quantized",
)


def _packed_weights(m: Any) -> bool:
    """A quantized layer (``quantize_dynamic``'s ``Linear``, a converted ``Conv2d``): its weights
    are packed in a C++ object, neither parameters nor buffers, so no count sees them."""
    cls = type(m)
    if not cls.__module__.startswith(_QUANTIZED_PACKAGES) or cls.__name__.endswith("PackedParams"):
        return False
    return hasattr(m, "_packed_params") or hasattr(m, "_weight_bias")


def _parametrizations(torch, m: Any) -> Optional[Any]:
    try:
        if torch.nn.utils.parametrize.is_parametrized(m):
            return m.parametrizations
    except Exception:
        pass
    return None


# A second stack is a trunk too (CLIP's text tower beside its vision tower, Whisper's encoder
# beside its decoder) when it holds at least this share of the largest stack's parameters: the
# released CLIPs' text towers hold 28-45% of their vision towers'; a stack of small heads beside
# a trunk holds a few percent.
TRUNK_SHARE = 0.25


def trunk_stacks(torch, root: Any, modules: Optional[List[Any]] = None) -> List[int]:
    """The blocks of each stack of the trunk, in the model's order (``[2, 2]`` for CLIP's two
    towers of 2 layers; ``[]`` when none). The largest stack alone said "2 blocks" of a model of
    4; their total alone hides that it is two towers of 2 deep: the line says ``2+2 blocks``.
    Sibling stacks of one block class are the stages of one trunk, counted as one (ResNet-50's
    ``layer1``..``layer4``: 16 blocks, not a tower per stage)."""
    found = _stages_merged(_block_stacks(torch, modules if modules is not None else model_modules(torch, root)))
    if not found:
        return []
    largest = max(size for _, size, _ in found)
    trunks = [(group, n) for group, size, n in found if size >= TRUNK_SHARE * largest]
    inner = {id(sub) for group, _ in trunks for m in group for sub in list(m.modules())[1:]}
    return [n for group, n in trunks if not any(id(m) in inner for m in group)]  # a stack inside a block is part of it


def _stages_merged(found: List[Tuple[Any, Any, int, int]]) -> List[Tuple[List[Any], int, int]]:
    """``(stacks, parameters, blocks)``: the stacks of one parent whose blocks are of one class
    taken together, in the model's order."""
    groups: Dict[Tuple[int, type], Tuple[List[Any], int, int]] = {}
    for stack, parent, size, blocks in found:
        key = (id(parent), type(next(stack.children())))
        members, total, count = groups.get(key, ([], 0, 0))
        groups[key] = (members + [stack], total + size, count + blocks)
    return list(groups.values())


def _block_stacks(torch, modules: List[Any]) -> List[Tuple[Any, Any, int, int]]:
    """``(stack, its parent, parameters, blocks)`` of each ``ModuleList``/``Sequential`` of two or
    more children of one class, each made of submodules (a ``Sequential`` of Linear/ReLU is layers)."""
    kinds = (torch.nn.ModuleList, torch.nn.Sequential)
    parents = {id(child): m for m in modules for child in m.children()}
    found = []
    for m in modules:
        if not isinstance(m, kinds):
            continue
        kids = list(m.children())
        if len(kids) < 2 or len({type(k) for k in kids}) != 1:
            continue
        if any(next(k.children(), None) is None for k in kids):
            continue
        size = sum(int(p.numel()) for _, p in unique_parameters(m.named_parameters()) if not _uninitialized(torch, p))
        found.append((m, parents.get(id(m)), size, len(kids)))
    return found


def _bad_names(torch, named: List, grads: bool) -> List[str]:
    """Names of parameters or buffers (or of the parameters' grads) holding any NaN or Inf."""
    bad = []
    for name, p in named:
        if cut_walk():
            break  # the debugger request is out of time: the line says stats… (stats/budget.py)
        t = p.grad if grads else p
        if t is None or not _checkable(torch, t):
            continue
        stats = VALUE_STATS.get_or_compute(t, fingerprint(t), functools.partial(value_stats, t))
        if (stats.get("nan") or stats.get("posinf") or stats.get("neginf")) and not _unobserved(name, stats):
            bad.append(name)
    return bad


def _unobserved(name: str, stats: Dict[str, Any]) -> bool:
    """A quantization observer that has seen no data yet: its ``min_val`` starts at +Inf and its
    ``max_val`` at -Inf (every QAT-prepared model before its first forward), no NaN/Inf of the model."""
    leaf = name.rsplit(".", 1)[-1]
    if stats.get("nan") or stats.get("count"):  # ``count``: the finite values
        return False
    if leaf == "min_val":
        return bool(stats.get("posinf")) and not stats.get("neginf")
    return leaf == "max_val" and bool(stats.get("neginf")) and not stats.get("posinf")


def _checkable(torch, t: Any) -> bool:
    return (
        t.layout == torch.strided
        and not t.is_meta
        and t.numel() > 0
        and (t.dtype.is_floating_point or t.dtype.is_complex)
    )


def render_module(info: Dict[str, Any]) -> str:
    """``GPT 4 blocks, 55 modules, 834K params cpu train ⚠ NaN/Inf in bn.running_mean``."""
    words = [str(info["type"])]
    made_of = []
    blocks = info.get("blocks")
    if blocks:
        stacks = info.get("stacks") or [blocks]
        made_of.append(f"{'+'.join(str(n) for n in stacks)} block{'s' if blocks != 1 else ''}")
    modules = int(info.get("modules") or 0)
    if modules:
        made_of.append(f"{modules} module{'s' if modules != 1 else ''}")
    params = f"{fmt_count(int(info['params']))} params"
    words.append(", ".join(made_of + [params]))
    frozen = int(info["params"]) - int(info["trainable"])
    if frozen:
        words.append(f"({fmt_count(frozen)} frozen)")
    if info.get("uninitialized"):
        words.append(f"(+{info['uninitialized']} uninitialized lazy)")
    words += _quantized_words(info)
    dtypes = info.get("dtypes") or []
    if dtypes and dtypes != ["f32"]:
        words.append("/".join(dtypes))
    devices = info.get("devices") or []
    if devices:
        words.append(("mixed devices " if len(devices) > 1 else "") + "+".join(devices))
    words.append(_mode(info))
    words += _where(info.get("nan_in"), "NaN/Inf in")
    words += _where(info.get("grad_nan_in"), "NaN/Inf in grad of")
    return " ".join(words)


def _quantized_words(info: Dict[str, Any]) -> List[str]:
    """Packed weights are not in the count: say so rather than let the line look empty."""
    quantized = int(info.get("quantized") or 0)
    if not quantized:
        return []
    if quantized == 1 and info.get("modules") == 0:
        return ["(quantized, weights not counted)"]  # the line of the quantized layer itself
    return [f"(+{quantized} quantized layer{'s' if quantized != 1 else ''}, weights not counted)"]


def _mode(info: Dict[str, Any]) -> str:
    mode = "train" if info.get("training") else "eval"
    other = int(info.get("other_mode") or 0)
    if not other:
        return mode
    return f"{mode} ({other} submodule{'s' if other != 1 else ''} in {'eval' if mode == 'train' else 'train'})"


def _where(labels, what: str) -> List[str]:
    if not labels:
        return []
    shown = ", ".join(labels[:3]) + (f" (+{len(labels) - 3} more)" if len(labels) > 3 else "")
    return [f"{WARN} {what} {shown}"]
