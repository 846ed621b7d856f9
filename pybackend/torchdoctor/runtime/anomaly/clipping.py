"""Gradient clipping done by the script: gradients are judged after it, and never advised.

A script that clips (``torch.nn.utils.clip_grad_norm_``, ``clip_grad_value_``,
``clip_grads_with_norm_``) may well see raw gradients far above the watch's threshold: the
optimizer only ever applies the clipped ones. So an explosion found right after ``backward()``
is held back (not reported) when the script clips: when the function that called ``backward()``
names one of those functions (its code object's names, read once per code object), or when a
clipping call has been seen. It is judged again right after the script's next clipping call,
on the clipped gradients; if the optimizer steps before any clipping, it is reported then.
Non-finite gradients are never held back (clipping does not make them finite).

The clipping functions are wrapped in ``torch.nn.utils`` and ``torch.nn.utils.clip_grad`` (the
two places a script imports them from); the originals run exactly as called.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict

NAMES = ("clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_")
MODULES = ("torch.nn.utils", "torch.nn.utils.clip_grad")
_NAME_SET = frozenset(NAMES)


def clip_wrapper(original: Callable, current: Callable[[], Any]) -> Callable:
    def clip(*args, **kwargs):
        result = original(*args, **kwargs)
        watch = current()
        if watch is not None:
            watch.after_clip(original.__name__)
        return result

    clip.__doc__ = original.__doc__
    clip.__name__ = original.__name__
    clip.__wrapped__ = original  # type: ignore[attr-defined]
    return clip


def targets():
    """``(module, name)`` pairs to wrap: every clipping function where a script finds it."""
    found = []
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            continue
        for name in NAMES:
            if callable(getattr(module, name, None)):
                found.append((module, name))
    return found


class ClipHints:
    """Does the script clip? Seen at run time, or named by the code around ``backward()``.

    Looked at only when an explosion is found (off the fast path): the code objects of the
    caller of ``backward()`` and of the two frames above it, and one call deep from them: the
    functions their names refer to (a local or global holding a function or lambda, a method of
    ``self``), each with the functions and lambdas defined inside it. A code object's answer is
    cached; a clipping helper reached only through other objects' attributes is learned at its
    first call (the first step may then be reported).
    """

    def __init__(self) -> None:
        self.seen = False  # a clipping function has run
        self._by_code: Dict[Any, bool] = {}

    def expected(self, frame: Any) -> bool:
        if self.seen:
            return True
        try:
            hops = 0
            while frame is not None and hops < 3:  # the caller of backward, and two above it
                if self._names(frame.f_code) or any(self._names(code) for code in _called(frame)):
                    return True
                frame, hops = frame.f_back, hops + 1
        except Exception:
            return False
        return False

    def _names(self, code: Any, depth: int = 0) -> bool:
        named = self._by_code.get(code)
        if named is None:
            named = bool(_NAME_SET.intersection(code.co_names)) or (
                depth < 2
                and any(self._names(const, depth + 1) for const in code.co_consts if hasattr(const, "co_names"))
            )
            if len(self._by_code) < MAX_CODES:
                self._by_code[code] = named
        return named


MAX_CODES = 512


def _called(frame: Any):
    """Code objects of the functions the frame's code can call by a name it holds."""
    code, local, glob = frame.f_code, frame.f_locals, frame.f_globals
    owner = type(local["self"]) if "self" in code.co_varnames and "self" in local else None
    for name in code.co_varnames + code.co_names:
        value = local.get(name, glob.get(name)) if name in local or name in glob else None
        if value is None and owner is not None:
            value = getattr(owner, name, None)
        function = getattr(value, "__func__", value)
        inner = getattr(function, "__code__", None)
        if inner is not None:
            yield inner
