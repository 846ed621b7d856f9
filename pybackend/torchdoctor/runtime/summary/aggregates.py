"""Caches for what is not one tensor: a model's whole line, and numpy arrays.

A model's line reads every parameter and gradient (their fingerprints, their NaN/Inf check):
tens of milliseconds for thousands of tensors even when every statistic is cached. While the
debuggee stays paused at one stop and nothing was run from the debug console (the request's
epoch, :mod:`..stats.budget`), nothing can have changed, so the line computed under that epoch
is returned as is: a second hover costs the same for 2,000 parameters as for one. A new stop,
or an expression evaluated in the REPL, is a new epoch: then the model is described again
(its unchanged tensors still hit the value cache). Without an epoch (no debugger request) a
model is always described afresh.

numpy arrays have no version counter: see :mod:`..stats.array_fingerprint` for when their
entry is trusted. A line whose statistics did not fit in the request's budget is never cached.
"""

from __future__ import annotations

from typing import Any, Dict

from ..stats import budget
from ..stats.array_fingerprint import array_fingerprint
from ..stats.blocks import collapse_expanded
from ..stats.cache import PENDING_NOTE, IdentityCache, is_pending

MODULE_LINES = IdentityCache(maxsize=1024)
ARRAYS = IdentityCache(maxsize=4096)


def describe_module_cached(module: Any) -> Dict[str, object]:
    """``describe_module(module)``, computed once per epoch; marked ``pending`` when part of
    its value check was deferred by the request's budget (then not cached)."""
    from .module_info import describe_module

    active = budget.current()
    epoch = None if active is None else active.epoch
    fingerprint = None if epoch is None else ("epoch", epoch)

    def compute() -> Dict[str, object]:
        before = active.deferred if active is not None else 0
        info = dict(describe_module(module))
        if active is not None and active.deferred > before:
            info["pending"] = True
        return info

    return dict(MODULE_LINES.get_or_compute(module, fingerprint, compute, budgeted=False))


def describe_array_cached(a: Any) -> Dict[str, object]:
    """``describe_array(a)`` through the array cache and the request's budget."""
    from .array_stats import describe_array

    if getattr(getattr(a, "dtype", None), "kind", "") not in "biufc" or a.size == 0:
        return describe_array(a)  # notes only, no statistics: nothing to cache or defer
    fingerprint = array_fingerprint(a, budget.current_epoch())
    info = ARRAYS.get_or_compute(a, fingerprint, lambda: describe_array(a))
    if is_pending(info):
        return _array_header(a)
    return dict(info)


def _array_header(a: Any) -> Dict[str, object]:
    """What an array is, with no statistics: shape, dtype, size, and the pending note."""
    try:
        from .array_stats import _dtype_label

        dtype = _dtype_label(a.dtype)
    except Exception:  # the label helper moved or failed: numpy's own name is still true
        dtype = str(a.dtype)
    info: Dict[str, object] = {
        "kind": "ndarray",
        "type": type(a).__name__,
        "shape": [int(d) for d in a.shape],
        "dtype": dtype,
        "device": None,
        "numel": int(a.size),
        "nbytes": int(a.size * a.itemsize),
        "note": PENDING_NOTE,
        "pending": True,
    }
    _, multiplicity = collapse_expanded(a)
    if multiplicity > 1:
        info["expanded"] = multiplicity
    return info
