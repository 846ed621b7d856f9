"""The monitor's wrappers of torch functions: each runs the original exactly as called.

``current()`` gives the installed :class:`recorder.Monitor` (None once uninstalled, or in a
forked DataLoader worker); then the wrapper is a plain pass-through. Nothing here raises into
the program: the monitor's own errors are counted in ``Monitor.errors``.
"""

from __future__ import annotations

import sys
import threading
from time import perf_counter
from typing import Any, Callable

_TLS = threading.local()  # backward nesting: Tensor.backward calls torch.autograd.backward

FUNCTIONAL_LOSSES = (
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
)


def backward_wrapper(original: Callable, current: Callable[[], Any], is_tensor_method: bool) -> Callable:
    def backward(first, *args, **kwargs):
        monitor = current()
        if monitor is None or getattr(_TLS, "inside", False):
            return original(first, *args, **kwargs)
        loss = first
        if not is_tensor_method and isinstance(first, (tuple, list)):
            loss = first[0] if len(first) == 1 else None
        _TLS.inside = True
        start = monitor.before_backward(loss, sys._getframe(1))
        try:
            return original(first, *args, **kwargs)
        finally:
            _TLS.inside = False
            monitor.after_backward(start)

    backward.__doc__ = original.__doc__
    backward.__wrapped__ = original  # type: ignore[attr-defined]
    return backward


def clip_norm_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``clip_grad_norm_``: its return value is the norm before clipping; noted for the step."""

    def clip_grad_norm_(parameters, max_norm, *args, **kwargs):
        monitor = current()
        if monitor is None:
            return original(parameters, max_norm, *args, **kwargs)
        params = [parameters] if monitor.is_tensor(parameters) else list(parameters)
        total = original(params, max_norm, *args, **kwargs)
        monitor.clipped(params, total, max_norm, kwargs.get("norm_type", args[0] if args else 2.0))
        return total

    clip_grad_norm_.__doc__ = original.__doc__
    clip_grad_norm_.__name__ = original.__name__
    clip_grad_norm_.__wrapped__ = original  # type: ignore[attr-defined]
    return clip_grad_norm_


def loader_init_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        monitor = current()
        if monitor is not None:
            monitor.loader_created(self, sys._getframe(1))

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __init__


def loader_iter_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    def __iter__(self):
        iterator = original(self)
        monitor = current()
        if monitor is not None:
            monitor.loader_iterated(self, iterator)
        return iterator

    __iter__.__wrapped__ = original  # type: ignore[attr-defined]
    return __iter__


def next_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``_BaseDataLoaderIter.__next__``: the time inside it is the step's data loading."""

    def __next__(self):
        monitor = current()
        if monitor is None:
            return original(self)
        start = perf_counter()
        batch = None
        try:
            batch = original(self)
            return batch
        finally:
            monitor.data_time(self, perf_counter() - start, batch)

    __next__.__wrapped__ = original  # type: ignore[attr-defined]
    return __next__


def functional_loss_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``F.cross_entropy`` and friends: under ``no_grad``/``eval()`` their value is a validation loss."""

    def loss(*args, **kwargs):
        result = original(*args, **kwargs)
        monitor = current()
        if monitor is not None and monitor.root is None:  # a loss module's own call is seen by its hook
            monitor.maybe_eval_loss(result, sys._getframe(1))
        return result

    loss.__doc__ = original.__doc__
    loss.__name__ = original.__name__
    loss.__wrapped__ = original  # type: ignore[attr-defined]
    return loss


def add_scalar_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    """``SummaryWriter.add_scalar``: the script's own scalars become user series."""

    def add_scalar(self, tag, scalar_value, global_step=None, *args, **kwargs):
        result = original(self, tag, scalar_value, global_step, *args, **kwargs)
        monitor = current()
        if monitor is not None and not getattr(self, "_torchdoctor_own", False):
            monitor.user_value(str(tag), scalar_value, global_step, from_writer=True)
        return result

    add_scalar.__doc__ = original.__doc__
    add_scalar.__wrapped__ = original  # type: ignore[attr-defined]
    return add_scalar
