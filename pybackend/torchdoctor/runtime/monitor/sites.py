"""Where things are in the user's code, and what the recorder holds of the user's objects.

``site(frame)``: the user's source line (path, line) a hook was called from, looked up once per
line. :class:`Optimizers`: the optimizers' step counts with the line each was created on.
``weak(obj)``: what the recorder keeps of a model, so that a sweep's deleted models are freed.
"""

from __future__ import annotations

import os
import sys
import weakref
from typing import Any, Callable, Dict, Optional

from ..anomaly.frames import user_frame
from ..anomaly.steps import OptimizerSteps

_SITES: Dict[Any, Dict[str, Any]] = {}  # (code, line) -> site: backward() is on the same line every step


def site(frame: Any) -> Optional[Dict[str, Any]]:
    user = user_frame(frame)
    if user is None:
        return None
    key = (user.f_code, user.f_lineno)
    found = _SITES.get(key)
    if found is None:
        if len(_SITES) > 4096:
            _SITES.clear()
        found = _SITES[key] = {"path": os.path.abspath(user.f_code.co_filename), "line": user.f_lineno}
    return dict(found)


def nothing() -> Any:
    return None


def weak(obj: Any) -> Callable[[], Any]:
    """A weak reference to ``obj`` (an object that takes none is forgotten at once: nothing)."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return nothing


class Optimizers(OptimizerSteps):
    def __init__(self) -> None:
        super().__init__()
        self.sites: Dict[int, Any] = {}

    def created(self, optimizer: Any) -> None:
        super().created(optimizer)
        if id(optimizer) not in self.sites:
            self.sites[id(optimizer)] = site(sys._getframe(1))
