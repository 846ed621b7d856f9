"""The watch's forward check: every module output, tested as the module returns it.

A mixin of :class:`watch.Watch` (it uses the watch's state: ``config``, ``names``, ``step``,
``pending``...), kept apart so that each file stays readable. The hook runs on every module
call, so its usual path is written for speed: plain attribute reads and C methods, each tensor
property read once, until something is off (then :meth:`watch.Watch._output_hit` reports).

The watch remembers the last tensor it checked (a weak reference, its ``id``, its version and
its extremes), which saves reads three ways:

- a container (``nn.Sequential``, a model's ``forward``) returns its last child's output: the
  same tensor at the same version is not read again, and its ``id`` is compared before
  anything else is read;
- an activation or pooling layer whose input is that tensor takes its bounds from the input's
  extremes (:mod:`passthrough`);
- a loss module's one value is the loss that ``backward()`` judges next (:mod:`loss_checks`).
"""

from __future__ import annotations

import math
import sys
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Set, Tuple

from .detect import (
    NONFINITE,
    QUICK_FROM,
    cpu_extremes,
    extremes,
    extremes_device,
    iter_tensors,
    quick_squares,
    verdict,
)
from .device import MAX_PENDING, DeviceBatch
from .host import WatchHost
from .masks import mask_candidate
from .passthrough import bounds_function, needs_exact

_INF = math.inf
_NAN = math.nan
_ref = weakref.ref


def _no_tensor() -> None:
    """What the last-output reference holds before the first check: nothing."""
    return None


class ForwardChecks(WatchHost):
    # The watch's state this mixin uses (declared for the type checker; the values are :class:`watch.Watch`'s).
    check_forward: bool
    force_deferred: bool
    pending: DeviceBatch
    _is_compiling: Callable[[], bool]
    _known: Dict[int, Any]
    _ran: Set[int]  # ids of the modules called since the last backward (lagging.py: is a copy used?)
    _tensor_type: Any
    _strided: Any
    _passing: Dict[type, Tuple[Any, bool]]
    _last_out: Callable[[], Any]  # weak reference to the last tensor checked (or _no_tensor)
    _last_id: int  # its id: compared first, the reference is followed only when they agree
    _last_version: int
    _last_extremes: Tuple[float, float]
    _last_exact: bool  # False: _last_extremes is only a bound on |x| (detect.quick_bound)
    _last_one: bool  # the last check read one value (a loss module's): _last_extremes is it
    _threshold: float  # config.threshold (watch._refresh_flags)

    if TYPE_CHECKING:

        def _output_hit(self, module, inputs, t, low: float, high: float, kind: str, before=None, kwargs=None): ...

        def _flush_deferred(self, loss: Any, frame: Any) -> None: ...

        def _error(self, exc: BaseException) -> None: ...

    def _forget_last(self) -> None:
        self._last_out, self._last_id, self._last_version = _no_tensor, -1, -1
        self._last_extremes, self._last_exact, self._last_one = (0.0, 0.0), True, False

    def _forward_hook(self, module: Any, inputs: Any, output: Any) -> None:
        """A torch whose global hooks take no keyword arguments."""
        return self._forward_hook_kwargs(module, inputs, None, output)

    def _forward_hook_kwargs(self, module: Any, inputs: Any, kwargs: Any, output: Any) -> None:
        # Hot path (every module call): plain attribute reads and C methods until something is off.
        if self._is_compiling():  # torch.compile is tracing: nothing here belongs in its graph
            return None
        self._ran.add(id(module))
        ref = self._known.get(id(module))
        if ref is None or ref() is not module:
            self.names.see(module)
            if len(self._ran) > RAN_AT_MOST:  # a loop with no backward making modules: bounded
                self._ran.clear()
        if not self.check_forward:
            return None
        if kwargs:
            inputs = inputs + tuple(kwargs.values())
        try:
            if type(output) is self._tensor_type:
                self._check_output(module, inputs, output, kwargs, True)
                return None
            for t in iter_tensors(output):
                self._check_output(module, inputs, t, kwargs)
        except Exception as exc:
            if not _unreadable(output):
                self._error(exc)
        return None

    def _check_output(self, module: Any, inputs: Any, t: Any, kwargs: Any = None, plain: bool = False) -> None:
        """Check one output tensor. ``plain``: a module's whole output, a ``torch.Tensor`` not yet
        tested (only dense floating tensors with values are read); otherwise ``t`` is checkable.
        Runs on every module call: one function, locals, the usual cases first."""
        try:
            version = t._version
        except RuntimeError:  # an inference tensor (torch.inference_mode) has no version counter
            version = -1  # never "the same version": it is read again rather than trusted
        last_id = self._last_id
        same = id(t) == last_id and self._last_out() is t
        if same and version == self._last_version and version >= 0:
            return  # a container returns its last child's output: the same tensor, already checked
        if plain and not (t.is_floating_point() and t.layout is self._strided):
            return
        n = t.numel()
        if not n:
            return
        if self.force_deferred or not t.is_cpu:
            self._defer_output(module, t, version)
            return
        cls = type(module)
        passing = self._passing.get(cls)
        if passing is None:  # once per module type: its passthrough bounds (or None), exact input needed?
            passing = self._passing[cls] = (bounds_function(cls), needs_exact(cls))
        threshold = self._threshold
        exact, one, low = True, False, None
        bounds = passing[0]
        if bounds is not None and inputs and id(inputs[0]) == last_id:
            # An activation or pooling of the tensor just checked: bounds from its extremes
            # (:mod:`passthrough`), unless it changed since, its extremes are not finite (NaN
            # fails both comparisons), or only a bound on |x| is known and zeros matter.
            x, last_version, exact = inputs[0], self._last_version, self._last_exact
            if self._last_out() is x and last_version >= 0 and x._version == last_version:
                if exact or not passing[1]:
                    low, high = self._last_extremes
                    if -_INF < low and high < _INF:
                        low, high = bounds(low, high, module)
                    else:
                        low = None
        if low is None:
            exact = True
            if n >= QUICK_FROM and self._quick_pass(t, version, threshold):
                return  # finite, within the threshold, not all zero: the usual case, in one pass
            if n == 1 and (plain or not t.dtype.is_complex):
                low = high = t.item()  # one value (a loss): its own extremes, one read and no reduction
                one = True
            else:
                low, high = cpu_extremes(t, n) if plain else extremes(t)
        # An in-place module (ReLU(inplace=True)) overwrote its input: what it was is kept here.
        before = self._last_extremes if same else None  # a bound on |x| when not exact: not zero either way
        self._last_out, self._last_id, self._last_version = _ref(t), id(t), version
        self._last_extremes, self._last_exact, self._last_one = (low, high), exact, one
        if low >= -threshold and high <= threshold and (low != 0.0 or high != 0.0):
            return  # the usual case: finite (NaN fails the comparisons), within bounds, not all zero
        self._output_hit(module, inputs, t, low, high, _verdict(low, high, threshold), before, kwargs)

    def _quick_pass(self, t: Any, version: int, threshold: float) -> bool:
        """The one-pass bound (:func:`detect.quick_squares`) proves the output fine: remember it."""
        squares = quick_squares(t)
        if squares is None or not (0.0 < squares <= threshold * threshold):
            return False  # NaN, Inf, past the threshold or all zero: the exact read decides
        bound = math.sqrt(squares)
        self._last_out, self._last_id, self._last_version = _ref(t), id(t), version
        self._last_extremes, self._last_exact, self._last_one = (-bound, bound), False, False
        return True

    def _defer_output(self, module: Any, t: Any, version: int) -> None:
        """Not on the CPU: the check waits on the device, read once per step (:mod:`device`)."""
        self._last_out, self._last_id, self._last_version = _ref(t), id(t), version
        self._last_extremes, self._last_one = (_NAN, _NAN), False  # unknown here: nothing derived from it
        kept = mask_candidate(t, version, self.pending.kept_values)
        if kept is not None:  # a mask may have written it: judged whole after backward (masks.py)
            self.pending.kept_values += t.numel()
        self.pending.add(("forward", _ref(module), kept), extremes_device(t).float())
        if len(self.pending) >= MAX_PENDING:
            self._flush_deferred(None, frame=sys._getframe())


# Modules called since the last backward kept at most (a copy not seen as called stays an anomaly).
RAN_AT_MOST = 4096


def _verdict(low: float, high: float, threshold: float) -> str:
    """What is off with extremes that failed the usual-case test (NONFINITE for NaN/Inf)."""
    return verdict(low, high, threshold) or NONFINITE


def _unreadable(output: Any) -> bool:
    """An output the watch does not read, found when its check raised (the usual path pays
    nothing): one made under a ``torch.func`` transform (``vmap`` per-sample gradients through
    ``functional_call``: reading a value, ``.item()``, raises there), or a nested tensor (what
    ``nn.TransformerEncoder``'s fast path passes between its layers in evaluation: no reduction
    reads it; the encoder's own padded output is checked). Not a failure of the watch (2026-12-06)."""
    torch = sys.modules["torch"]
    try:
        wrapped = torch._C._functorch.is_functorch_wrapped_tensor
        tensors = [output] if isinstance(output, torch.Tensor) else list(iter_tensors(output))
        return any(t.is_nested or wrapped(t) for t in tensors)
    except Exception:  # a torch without functorch, or an output it cannot walk: a real failure
        return False
