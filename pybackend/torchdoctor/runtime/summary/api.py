"""The runtime's public face: ``summarize(obj) -> str`` and ``stats(obj) -> dict``.

Both are safe to call on anything, from any thread, at any stop: they never raise (a failure
becomes a short string or an ``{"kind": "error"}`` dict), never print, never draw random
numbers, never record autograd history and never modify or move the object.

Inside a debugger request a time budget is active (:mod:`..stats.budget`): what is free (kind,
shape, dtype, device, size, grad) is always shown, statistics only when they fit; the rest says
``stats…`` on the line (``"pending": True`` in ``stats()``) and is computed when expanded or
at a later request. Models and numpy arrays go through :mod:`aggregates`' caches.
"""

from __future__ import annotations

import reprlib
from typing import Any, Dict, Optional

from ...spelling import clip
from ..stats import budget
from ..stats.cache import PENDING_NOTE
from .jsonable import jsonable
from .kinds import CONFIG, CONTAINER, MODULE, NDARRAY, TENSOR, TRAINING, classify, training_kind
from .render import LINE_LIMIT, render

_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxstring = 80
_SHORT_REPR.maxother = 80


def stats(obj: Any) -> Dict[str, object]:
    """JSON-able facts about ``obj``; ``kind`` is tensor, ndarray, module, config, container, other, or
    a training object's (optimizer, scheduler, dataloader, dataset, sampler, grad_scaler, generator)."""
    try:
        return jsonable(_describe(obj))
    except Exception as exc:  # never raise into the user's program or the debugger
        return _error(obj, exc)


def summarize(obj: Any) -> str:
    """One line: ``tensor[64, 10] f32 cpu 2.5 KiB μ=0.012 σ=0.98 [-3.1, 2.9]``.

    Objects that are none of ours (an int, a list without tensors) get a short repr.
    """
    line = summarize_if_ours(obj)
    if line is not None:
        return line
    try:
        return clip(_SHORT_REPR.repr(obj), LINE_LIMIT)
    except Exception as exc:
        return render(_error(obj, exc))


def summarize_if_ours(obj: Any) -> Optional[str]:
    """The summary of a tensor, array, module or container of tensors; None for anything else,
    so a debugger can keep its own presentation of ordinary values."""
    info = _facts(obj)
    if info.get("kind") == "other":
        return None
    try:
        line = render(info)
    except Exception as exc:
        return render(_error(obj, exc))
    if info.get("pending") and info.get("kind") in ("module", "container") and PENDING_NOTE not in line:
        line += " " + PENDING_NOTE  # part of its NaN/Inf check did not fit: say so, never drop it
    return line


def _facts(obj: Any) -> Dict[str, object]:
    """``stats(obj)`` for a line: a model's facts as described, without the JSON copy. Its line
    names three of the parameters holding NaN/Inf; copying every name (thousands after a NaN
    optimizer step) made each hover of the same stop work per parameter (issue 15)."""
    try:
        info = _describe(obj)
        return info if info.get("kind") == "module" else jsonable(info)
    except Exception as exc:  # as stats(): never raise into the user's program or the debugger
        return _error(obj, exc)


def _describe(obj: Any) -> Dict[str, object]:
    active = budget.current()
    before = active.deferred if active is not None else 0
    info = _describe_kind(obj)
    if active is not None and active.deferred > before and info.get("kind") in ("module", "container"):
        info = dict(info, pending=True)
    return info


def _describe_kind(obj: Any) -> Dict[str, object]:
    kind = classify(obj)
    if kind == TENSOR:
        from .tensor_info import describe_tensor

        return describe_tensor(obj)
    if kind == NDARRAY:
        from .aggregates import describe_array_cached

        return describe_array_cached(obj)
    if kind == MODULE:
        from .aggregates import describe_module_cached

        return describe_module_cached(obj)
    if kind == TRAINING:
        from .training import describe_training

        return describe_training(obj, training_kind(type(obj)))
    if kind == CONFIG:
        from .config_info import describe_config

        return describe_config(obj)
    if kind == CONTAINER:
        from .container_info import describe_container

        described = describe_container(obj)
        if described is not None:
            return described
    return {"kind": "other", "type": _type_name(obj)}


def _error(obj: Any, exc: BaseException) -> Dict[str, object]:
    return {"kind": "error", "type": _type_name(obj), "error": clip(f"{type(exc).__name__}: {exc}", 100)}


def _type_name(obj: Any) -> str:
    try:
        return type(obj).__name__
    except Exception:
        return "object"
