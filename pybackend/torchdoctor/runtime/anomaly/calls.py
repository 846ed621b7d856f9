"""``Module._call_impl`` with the watch's output check after it, instead of a global forward hook.

Any global forward hook sends every module call of the program down torch's slow path (a closure,
a set, the hook tables walked, ``is_compiling`` asked, a ``try``), which costs a tiny model more
than the check itself. This wrapper calls torch's own ``_call_impl`` (its fast path when the
program has no hooks, its slow path with the program's hooks when it has some) and then the
check, with the same arguments a global forward hook with keyword arguments gets: the module, its
positional arguments, its keyword arguments and its output. The output is never replaced.

Under ``torch.compile`` the check returns at once (it asks ``torch.compiler.is_compiling``), as
the hook did. A forward that raises skips the check, as a hook without ``always_call`` would.
The frame of this wrapper has the module as ``self``: :mod:`frames` and :mod:`origins` read the
stack's modules from it (``_call_impl``'s code is looked up on ``nn.Module`` each time).
"""

from __future__ import annotations

from typing import Any, Callable


def call_wrapper(original: Callable[..., Any], check: Callable[[Any, Any, Any, Any], None]) -> Callable[..., Any]:
    def _call_impl(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        check(self, args, kwargs, result)
        return result

    _call_impl.__wrapped__ = original  # type: ignore[attr-defined]
    return _call_impl
