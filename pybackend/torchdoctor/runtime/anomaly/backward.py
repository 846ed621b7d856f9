"""The watch's wrappers of ``Tensor.backward`` and ``torch.autograd.backward``.

Each runs the real backward exactly as called, with the installed watch's checks before and
after it (``current()`` gives the watch, or None once uninstalled); a backward inside a backward
(``Tensor.backward`` calls ``torch.autograd.backward``) is checked once.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable

_TLS = threading.local()  # backward nesting: Tensor.backward calls torch.autograd.backward


def tensor_backward(original: Callable, current: Callable[[], Any]) -> Callable:
    """``Tensor.backward`` with the watch's checks around it."""

    def backward(self, *args, **kwargs):
        return _run_backward(current, original, self, self, args, kwargs)

    backward.__doc__ = original.__doc__
    backward.__wrapped__ = original  # type: ignore[attr-defined]
    return backward


def autograd_backward(original: Callable, current: Callable[[], Any]) -> Callable:
    """``torch.autograd.backward`` with the watch's checks around it."""

    def backward(tensors, *args, **kwargs):
        loss = tensors if not isinstance(tensors, (tuple, list)) else (tensors[0] if len(tensors) == 1 else None)
        return _run_backward(current, original, loss, tensors, args, kwargs)

    backward.__doc__ = original.__doc__
    backward.__wrapped__ = original  # type: ignore[attr-defined]
    return backward


def _run_backward(current: Callable[[], Any], original: Callable, loss: Any, first: Any, args, kwargs):
    """One step: checks before and after the real backward, which runs exactly as called."""
    watch = current()
    if watch is None or getattr(_TLS, "inside", False):
        return original(first, *args, **kwargs)
    _TLS.inside = True
    try:
        frame = sys._getframe(2)  # the caller of the wrapper; the user frame is looked for only if there is a report
        watch.before_backward(loss, frame)
        result = original(first, *args, **kwargs)
        watch.after_backward(loss, frame)
        return result
    finally:
        _TLS.inside = False
