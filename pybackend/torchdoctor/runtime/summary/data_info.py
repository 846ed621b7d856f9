"""``stats()`` and the line of a ``DataLoader``, a dataset and a sampler.

Nothing is iterated and no ``__getitem__`` runs: a loader's batches, its shuffling and its
samples are read from its sampler's attributes (``RandomSampler`` shuffles; nothing is drawn).
The one user code called is a dataset's or sampler's own ``__len__`` (a class that has none,
such as an ``IterableDataset``, has no length): guarded, and a class whose ``__len__`` took
longer than :data:`SLOW_LEN_SECONDS` once is not asked again in this process (the value read
that once is shown again for the same object). torch's own
datasets and samplers are measured from their attributes (``Subset.indices``,
``ConcatDataset.cumulative_sizes``, ``TensorDataset.tensors``), calling no ``__len__``.
"""

from __future__ import annotations

import contextlib
import contextvars
import random
import sys
import time
import weakref
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from ...spelling import fmt_shape, short_dtype
from .optim_info import read

SLOW_LEN_SECONDS = 0.05
_SLOW_LEN: Set[type] = set()  # classes whose __len__ was slow once: not called again
_SLOW_VALUES: Dict[int, Tuple[Any, int]] = {}  # id -> (weak reference, the length read that once)
MAX_TENSORS_SHOWN = 4
MAX_PARTS_SHOWN = 3


def _data():
    return sys.modules["torch.utils.data"]


def _is(obj: Any, name: str) -> bool:
    cls = getattr(sys.modules.get("torch.utils.data"), name, None)
    return isinstance(cls, type) and isinstance(obj, cls)


def _own_len(obj: Any, name: str) -> bool:
    """``obj`` is torch's ``name`` (or a subclass keeping its ``__len__``): its length is in its attributes."""
    cls = getattr(sys.modules.get("torch.utils.data"), name, None)
    return (
        isinstance(cls, type)
        and isinstance(obj, cls)
        and getattr(type(obj), "__len__", None) is cls.__dict__.get("__len__")
    )


# The lengths read during one summary, by id: a loader's line reaches its dataset through the
# loader, its sampler and the sampler's source, and a user ``__len__`` must run once, not four times.
_READ: "contextvars.ContextVar[Optional[Dict[int, Any]]]" = contextvars.ContextVar("torchdoctor_lengths", default=None)


@contextlib.contextmanager
def one_summary() -> Iterator[None]:
    """Within: each object's length is read once (:func:`length`)."""
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def length(obj: Any) -> Tuple[Optional[int], Optional[str]]:
    """``(len, None)``, or ``(None, why not)``: ``"no len"``, ``"len failed: ValueError"``, ``"len not read: slow"``."""
    read_here = _READ.get()
    if read_here is None:
        return _length(obj)
    key = id(obj)
    if key in read_here:
        return read_here[key][1]
    read_here[key] = (obj, (None, "len failed: cycle"))  # a sampler that is its own source
    found = _length(obj)
    read_here[key] = (obj, found)  # the object is held: its id stays its own meanwhile
    return found


def _length(obj: Any) -> Tuple[Optional[int], Optional[str]]:
    try:
        known = _known_length(obj)
    except Exception as exc:
        return None, f"len failed: {type(exc).__name__}"
    if known is not None:
        return known
    cls = type(obj)
    if getattr(cls, "__len__", None) is None:
        return None, "no len"
    if cls in _SLOW_LEN:
        earlier = _SLOW_VALUES.get(id(obj))
        if earlier is not None and earlier[0]() is obj:
            return earlier[1], None
        return None, "len not read: slow"
    return _user_len(obj, cls)


def _remember(obj: Any, n: int) -> None:
    """A slow ``__len__``'s value for this object, shown at the next stops instead of
    ``len not read: slow`` (a dataset's length rarely changes; calling it again is what costs)."""
    try:
        ref = weakref.ref(obj)
    except TypeError:
        return  # not weakly referable: held nowhere, so the next line says "len not read: slow"
    _SLOW_VALUES[id(obj)] = (ref, n)
    for key in [k for k, (r, _) in _SLOW_VALUES.items() if r() is None]:
        del _SLOW_VALUES[key]  # a freed object's id may be reused by another


def _user_len(obj: Any, cls: type) -> Tuple[Optional[int], Optional[str]]:
    """A user ``__len__``, the one user code the line runs: the random generators it might draw
    from are put back, a ``SystemExit`` is its failure (a ``KeyboardInterrupt`` is the user's)."""
    start = time.perf_counter()
    with kept_rng():
        try:
            n = len(obj)
        except (Exception, SystemExit) as exc:
            return None, f"len failed: {type(exc).__name__}"
        finally:
            slow = time.perf_counter() - start > SLOW_LEN_SECONDS
            if slow:
                _SLOW_LEN.add(cls)
    if slow:
        _remember(obj, int(n))
    return int(n), None


@contextlib.contextmanager
def kept_rng() -> Iterator[None]:
    """``random``'s, numpy's (when imported) and torch's CPU generator states, restored after."""
    torch, numpy = sys.modules["torch"], sys.modules.get("numpy")
    states = (random.getstate(), numpy.random.get_state() if numpy is not None else None, torch.get_rng_state())
    try:
        yield
    finally:
        random.setstate(states[0])
        if numpy is not None and states[1] is not None:
            numpy.random.set_state(states[1])
        torch.set_rng_state(states[2])


Length = Tuple[Optional[int], Optional[str]]


def _known_length(obj: Any) -> Optional[Length]:
    """The length of torch's own datasets and samplers, from their attributes; None for others."""
    if _own_len(obj, "TensorDataset"):
        return int(obj.tensors[0].size(0)), None
    if _own_len(obj, "Subset"):
        return len(obj.indices), None
    if _own_len(obj, "ConcatDataset"):
        return (int(obj.cumulative_sizes[-1]) if obj.cumulative_sizes else 0), None
    if _own_len(obj, "SubsetRandomSampler"):
        return len(obj.indices), None
    if _own_len(obj, "WeightedRandomSampler") or _own_len(obj, "DistributedSampler"):
        return int(obj.num_samples), None
    if _own_len(obj, "RandomSampler"):
        fixed = vars(obj).get("_num_samples")  # num_samples=; else the data source's length
        return (int(fixed), None) if fixed is not None else length(obj.data_source)
    if _own_len(obj, "SequentialSampler"):
        return length(obj.data_source)
    if _own_len(obj, "BatchSampler") and isinstance(obj.batch_size, int) and obj.batch_size > 0:
        n, why = length(obj.sampler)
        if n is None:
            return None, why
        return (n // obj.batch_size if obj.drop_last else -(-n // obj.batch_size)), None
    return None


def _count(n: int, noun: str) -> str:
    plural = "es" if noun.endswith("ch") else "s"
    return f"{n:,} {noun}{plural if n != 1 else ''}"


# -- datasets --------------------------------------------------------------------------------


def describe_dataset(ds: Any) -> Dict[str, object]:
    info: Dict[str, object] = {"kind": "dataset", "type": type(ds).__name__}
    info["iterable"] = _is(ds, "IterableDataset")
    n, why = length(ds)
    info["len"], info["no_len"] = n, why
    if _is(ds, "Subset"):
        inner = read(lambda: ds.dataset)
        if inner is not None:
            info["of"] = type(inner).__name__
            info["of_len"] = length(inner)[0]
    elif _is(ds, "TensorDataset"):
        info["tensors"] = read(lambda: [_tensor_text(t) for t in ds.tensors], default=[])
    elif _is(ds, "ConcatDataset") or _is(ds, "ChainDataset"):
        info["parts"], info["part_count"] = read(lambda: _parts(ds), default=([], 0))
    return info


def _tensor_text(t: Any) -> str:
    return f"{fmt_shape(t.shape)} {short_dtype(str(t.dtype))}" + ("" if t.device.type == "cpu" else f" {t.device}")


def _parts(ds: Any) -> Tuple[List[List[Any]], int]:
    """``[name, len or None]`` of the first parts shown, and how many parts there are in all; a
    ``ConcatDataset``'s lengths from its cumulative sizes (100,000 parts cost no more than 3)."""
    parts = ds.datasets
    total = len(parts) if isinstance(parts, (list, tuple)) else None
    first = list(parts[:MAX_PARTS_SHOWN]) if total is not None else list(parts)
    total = len(first) if total is None else total  # a ChainDataset's iterable of parts
    cumulative = vars(ds).get("cumulative_sizes")
    sizes: List[Optional[int]] = [None] * len(first)
    if isinstance(cumulative, list) and len(cumulative) == total:
        sizes = [int(cumulative[i] - (cumulative[i - 1] if i else 0)) for i in range(len(first))]
    return [[type(p).__name__, n] for p, n in zip(first[:MAX_PARTS_SHOWN], sizes)], total


def _name(ds: Any) -> str:
    """``CIFAR10``; a ``Subset`` names what it is a subset of: ``Subset of CIFAR10``."""
    inner = read(lambda: ds.dataset) if _is(ds, "Subset") else None
    return type(ds).__name__ + (f" of {type(inner).__name__}" if inner is not None else "")


def _dataset_name(name: str) -> str:
    return name if "dataset" in name.lower() else f"{name} dataset"


def render_dataset(info: Dict[str, Any]) -> str:
    """``TensorDataset 1,000 samples: [1000, 3, 32, 32] f32, [1000] i64``; ``Subset 5,000 of CIFAR10 (50,000)``."""
    name = str(info["type"])
    n = info.get("len")
    if info.get("of"):
        head = f"{name} {n:,}" if n is not None else f"{name} ({info.get('no_len')})"
        of_len = info.get("of_len")
        return f"{head} of {info['of']}" + (f" ({of_len:,})" if of_len is not None else "")
    kind = ("iterable " if info.get("iterable") and "iterable" not in name.lower() else "") + _dataset_name(name)
    words = [kind, _count(n, "sample") if n is not None else f"({info.get('no_len')})"]
    tensors = info.get("tensors")
    if tensors:
        more = len(tensors) - MAX_TENSORS_SHOWN
        words[-1] += ": " + ", ".join(tensors[:MAX_TENSORS_SHOWN]) + (f" (+{more} more)" if more > 0 else "")
    parts = info.get("parts")
    if parts:
        shown = [f"{p}" + (f" {s:,}" if s is not None else "") for p, s in parts[:MAX_PARTS_SHOWN]]
        more = int(info.get("part_count") or len(parts)) - len(shown)
        words[-1] += ": " + " + ".join(shown) + (f" + {more:,} more" if more > 0 else "")
    return " ".join(words)


# -- samplers --------------------------------------------------------------------------------


MAX_SAMPLER_DEPTH = 4  # a BatchSampler of a sampler of ...: deeper ones are named, not described


def describe_sampler(s: Any, depth: int = 0) -> Dict[str, object]:
    info: Dict[str, object] = {"kind": "sampler", "type": type(s).__name__}
    n, why = length(s)
    info["len"], info["no_len"] = n, why
    source = read(lambda: vars(s).get("data_source", vars(s).get("dataset")))
    if source is not None and source is not s:
        info["source"] = _name(source)
        info["source_len"] = length(source)[0]
    info["order"] = _order(s)
    if _is(s, "DistributedSampler"):
        for field in ("rank", "num_replicas", "epoch", "seed", "drop_last"):
            value = read(getattr, s, field)
            if isinstance(value, (int, bool)):
                info[field] = value
    if _is(s, "BatchSampler"):
        info["batch_size"] = read(lambda: s.batch_size)
        info["drop_last"] = read(lambda: bool(s.drop_last))
        inner = read(lambda: s.sampler)
        if inner is not None:
            described = _is(inner, "Sampler") and inner is not s and depth < MAX_SAMPLER_DEPTH
            info["sampler"] = describe_sampler(inner, depth + 1) if described else {"type": type(inner).__name__}
    return info


def _order(s: Any) -> Optional[str]:
    """How its indices come: ``shuffle``, ``in order``, ``weighted``; None when unknown (a user sampler)."""
    if _is(s, "RandomSampler"):
        return "shuffle with replacement" if read(lambda: s.replacement) else "shuffle"
    if _is(s, "SubsetRandomSampler"):
        return "shuffle"
    if _is(s, "WeightedRandomSampler"):
        return "weighted" + (" with replacement" if read(lambda: s.replacement) else "")
    if _is(s, "SequentialSampler"):
        return "in order"
    if _is(s, "DistributedSampler"):
        shuffle = read(lambda: s.shuffle)
        return None if shuffle is None else ("shuffle" if shuffle else "in order")
    return None


def sampler_words(info: Dict[str, Any], with_len: bool = True) -> List[str]:
    """What a sampler's line and a loader's line say of it: how many, of what, in which order."""
    words = []
    n, source, total = info.get("len"), info.get("source"), info.get("source_len")
    if with_len:
        count = _count(n, "sample") if n is not None else f"({info.get('no_len')})"
        if "rank" in info:
            count = count + "/rank" if n is not None else count
        if source:
            count += f" of {source}" + (f" ({total:,})" if total is not None and total != n else "")
        words.append(count)
    if "rank" in info and "num_replicas" in info:
        words.append(f"rank {info['rank']} of {info['num_replicas']}")
    if info.get("order"):
        words.append(str(info["order"]))
    if "epoch" in info:
        words.append(f"epoch {info['epoch']}")
    if info.get("seed"):
        words.append(f"seed {info['seed']}")
    if info.get("drop_last") and "batch_size" not in info:
        words.append("drops the uneven tail")  # a DistributedSampler's drop_last: not the loader's
    return words


def render_sampler(info: Dict[str, Any]) -> str:
    """``DistributedSampler 7,500 samples/rank of MNIST (60,000) · rank 0 of 8 · shuffle · epoch 3``."""
    name = str(info["type"])
    if "batch_size" in info:
        inner = info.get("sampler") or {}
        n = info.get("len")
        head = f"{name} {_count(n, 'batch') if n is not None else '(' + str(info.get('no_len')) + ')'}"
        head += f" of {info['batch_size']}" if info.get("batch_size") is not None else ""
        parts = [head]
        if inner.get("type"):
            parts.append(render_sampler(inner) if "kind" in inner else str(inner["type"]))
        if info.get("drop_last"):
            parts.append("drop_last")
        return " · ".join(parts)
    words = sampler_words(info)
    return " · ".join([f"{name} {words[0]}"] + words[1:]) if words else name


# -- DataLoader ------------------------------------------------------------------------------


def describe_loader(loader: Any) -> Dict[str, object]:
    fields = read(lambda: vars(loader), default={})
    info: Dict[str, object] = {"kind": "dataloader", "type": type(loader).__name__}
    dataset = fields.get("dataset")
    if dataset is not None:
        info["dataset"] = describe_dataset(dataset) if _is(dataset, "Dataset") else _plain_dataset(dataset)
    info["iterable"] = _is(dataset, "IterableDataset")
    info["batch_size"] = fields.get("batch_size")
    info["drop_last"] = bool(fields.get("drop_last"))
    batches = fields.get("batch_sampler")
    if _is(batches, "BatchSampler"):  # batch_size= makes one; a batch_sampler= given leaves batch_size None
        info["batch_size"] = read(lambda: batches.batch_size)
        info["drop_last"] = bool(read(lambda: batches.drop_last))
    info["workers"] = fields.get("num_workers")
    info["persistent"] = bool(fields.get("persistent_workers"))
    batches, sampler = fields.get("batch_sampler"), fields.get("sampler")
    if not info["iterable"]:
        if batches is not None:
            info["batches"] = length(batches)[0]
            if not _is(batches, "BatchSampler"):
                # the user's batch sampler picks the indices: the loader's own sampler is unused
                info["batch_sampler"] = type(batches).__name__
                sampler = None
            else:
                sampler = read(lambda: batches.sampler, default=sampler)
        if sampler is not None:
            info["sampler"] = describe_sampler(sampler) if _is(sampler, "Sampler") else _plain_sampler(sampler)
    return info


def _plain_sampler(sampler: Any) -> Dict[str, object]:
    """``sampler=`` given as a list or range of indices (any iterable is allowed): how many it draws
    matters more than the dataset's size, so it is counted as a sampler of unknown order."""
    n, why = length(sampler)
    return {"kind": "sampler", "type": type(sampler).__name__, "len": n, "no_len": why, "order": None}


def _plain_dataset(dataset: Any) -> Dict[str, object]:
    """A dataset that is no torch ``Dataset`` (a Hugging Face ``datasets.Dataset``): its name and length."""
    n, why = length(dataset)
    return {"kind": "dataset", "type": type(dataset).__name__, "len": n, "no_len": why}


def render_loader(info: Dict[str, Any]) -> str:
    """``DataLoader 938 batches of 64 · 60,000 samples of MNIST · shuffle · 2 workers · drop_last``."""
    dataset = info.get("dataset") or {}
    size = info.get("batch_size")
    of = f" of {size}" if size is not None else ""
    parts = []
    if info.get("iterable"):
        parts.append(f"{info['type']} batches{of}" if size is not None else f"{info['type']} unbatched")
        parts.append(render_dataset(dataset) if dataset else "iterable dataset")
    else:
        sampler = info.get("sampler") or {}
        n = info.get("batches")
        if size is None and "batch_sampler" not in info:
            parts.append(f"{info['type']} unbatched")
        else:
            count = _count(n, "batch") if n is not None else "batches"
            parts.append(
                f"{info['type']} {count}{of}" + (f" ({info['batch_sampler']})" if "batch_sampler" in info else "")
            )
        if sampler.get("kind"):
            words = sampler_words(sampler)
            if words and not sampler.get("source") and dataset.get("type"):
                total = dataset.get("len")
                words[0] += f" of {dataset['type']}" + (
                    f" ({total:,})" if total is not None and total != sampler.get("len") else ""
                )
            if sampler.get("order") is None or "rank" in sampler:  # a user's or a distributed sampler: name it
                words.insert(1, str(sampler["type"]))
            parts += words
        elif dataset:
            parts.append(render_dataset(dataset))
    workers = info.get("workers")
    if isinstance(workers, int):
        parts.append(_count(workers, "worker") + (" (persistent)" if info.get("persistent") and workers else ""))
    if info.get("drop_last"):
        parts.append("drop_last")
    return " · ".join(parts)
