"""Caches for what is not one tensor: a model's whole line, and numpy arrays.

A model's line reads every parameter and gradient (their fingerprints, their NaN/Inf check):
tens of milliseconds for thousands of tensors even when every statistic is cached. While the
debuggee stays paused at one stop and nothing was run from the debug console (the request's
epoch, :mod:`..stats.budget`), nothing can have changed, so the line computed under that epoch
is returned as is: a second hover costs the same for 2,000 parameters as for one. A new stop,
or an expression evaluated in the REPL, is a new epoch: then the model is described again
(its unchanged tensors still hit the value cache). Without an epoch (no debugger request) a
model is always described afresh.

The walk proves small parameters and gradients finite in chunks of :data:`CHUNK`, one batched
norm each (:mod:`..stats.finite_check`, a few milliseconds for a 500-parameter model instead of
~0.2 ms per tensor); a tensor the norm does not prove finite, or a big one, is checked by its
own statistics through the value cache, as before.

numpy arrays have no version counter: see :mod:`..stats.array_fingerprint` for when their
entry is trusted. A line whose statistics did not fit in the request's budget is never cached.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Tuple

from ..stats import budget, finite_check
from ..stats.array_fingerprint import array_fingerprint
from ..stats.blocks import collapse_expanded
from ..stats.cache import PENDING_NOTE, IdentityCache, is_pending

MODULE_LINES = IdentityCache(maxsize=1024)
# Tensors of a model's NaN/Inf walk proven finite per batched norm (bounded time per chunk).
CHUNK = 256
ARRAYS = IdentityCache(maxsize=4096)


def describe_module_cached(module: Any) -> Dict[str, object]:
    """``describe_module(module)``, computed once per epoch. Under a budget its NaN/Inf walk runs
    in steps: each request walks what fits and the next one (same stop) resumes where it was
    cut, so a model of thousands of tensors completes even on a loaded machine; until then its
    line says ``stats…`` (with any NaN found so far)."""
    from .module_info import describe_module

    active = budget.current()
    epoch = None if active is None else active.epoch
    if epoch is None:
        before = active.deferred if active is not None else 0
        info = dict(describe_module(module))
        if active is not None and active.deferred > before:
            info["pending"] = True
        return info
    fingerprint = ("epoch", epoch)
    value = MODULE_LINES.get_or_compute(module, fingerprint, lambda: _Walk(module), budgeted=False)
    if not isinstance(value, _Walk):
        return dict(value)
    info = value.advance()
    if not info.get("pending"):
        MODULE_LINES.replace(module, fingerprint, info)
    return dict(info)


class _Walk:
    """A model's line without its NaN/Inf check, and the check done so far at this stop."""

    def __init__(self, module: Any) -> None:
        import sys

        from .module_info import _bad_names, describe_module, module_tensors

        torch = sys.modules["torch"]
        self._torch, self._bad_names = torch, _bad_names
        tensors = module_tensors(torch, module)  # enumerated once, for the line and the walk
        self.info = dict(describe_module(module, check=False, tensors=tensors))
        self.items: List[Tuple[str, Any, bool]] = []
        if self.info.get("checked"):
            # The tensors describe_module checks, in its order: parameters once by storage, then
            # floating buffers, then the parameters' grads.
            _, params, buffers = tensors
            self.items = [(n, t, False) for n, t in params + buffers] + [(n, p, True) for n, p in params]
        self.position = 0
        self.bad: List[str] = []
        self.bad_grads: List[str] = []
        self.lock = threading.Lock()
        self.listed_by: Any = None  # the Variables listing that walked it first at this stop

    def advance(self) -> Dict[str, object]:
        """Walk on until done or out of its share of time; the line as it stands."""
        active = budget.current()
        if active is not None and active.listing:
            if self.listed_by is not None and self.listed_by is not active:
                return self._line()  # a re-listing of this stop: the line as it stands, no walk
            self.listed_by = active
        stop_at = None
        if active is not None and active.deadline is not None:
            # A walk takes at most a share of what is left, so the values listed after a big
            # model still get their statistics in the same request.
            stop_at = time.monotonic() + max(active.remaining(), 0.0) * active.walk_share
        with self.lock, self._torch.no_grad():
            clean: Dict[int, bool] = {}
            while self.position < len(self.items):
                if budget.cut_walk():
                    break
                if stop_at is not None and time.monotonic() > stop_at and active is not None:
                    active.defer()
                    break
                if self.position not in clean:
                    clean = self._next_chunk()
                if clean.get(self.position):
                    self.position += 1  # its norm is finite: no NaN/Inf (stats/finite_check.py)
                    continue
                name, tensor, grads = self.items[self.position]
                before = active.deferred if active is not None else 0
                found = self._bad_names(self._torch, [(name, tensor)], grads)
                if active is not None and active.deferred > before:
                    break  # its statistics did not fit: not checked yet, try it again next time
                (self.bad_grads if grads else self.bad).extend(found)
                self.position += 1
            return self._line()

    def _next_chunk(self) -> Dict[int, bool]:
        """From the walk's position on, up to :data:`CHUNK` items: which are proven finite by one
        batched norm (the others, and any chunk member not proven, are checked exactly)."""
        positions = range(self.position, min(self.position + CHUNK, len(self.items)))
        tensors = [self._tensor(i) for i in positions]
        flags = finite_check.surely_finite(self._torch, tensors)
        return {i: bool(flag) for i, flag in zip(positions, flags)}

    def _tensor(self, i: int) -> Any:
        _, tensor, grads = self.items[i]
        return getattr(tensor, "grad", None) if grads else tensor

    def _line(self) -> Dict[str, object]:
        info = dict(self.info)
        if self.info.get("checked"):
            info["nan_in"], info["grad_nan_in"] = list(self.bad), list(self.bad_grads)
        if self.position < len(self.items):
            info["pending"] = True
        return info


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
    _, multiplicity = collapse_expanded(a) if a.size else (a, 1)  # empty: strides 0, not expanded
    if multiplicity > 1:
        info["expanded"] = multiplicity
    return info
