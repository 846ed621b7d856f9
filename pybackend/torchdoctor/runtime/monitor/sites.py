"""Where things are in the user's code, and what the recorder holds of the user's objects.

``site(frame)``: the user's source line (path, line) a hook was called from, looked up once per
line. :class:`Optimizers`: the optimizers' step counts, a key per optimizer object and the line
each was created on. ``weak(obj)``: what the recorder keeps of a model, so that a sweep's deleted
models are freed.
"""

from __future__ import annotations

import itertools
import os
import sys
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

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
    """Step counts (by ``id``, shared with the anomaly watch) and a key per optimizer object.

    A sweep builds a new optimizer per trial and frees the old one, and CPython often gives the
    new one the freed one's ``id``: keyed by ``id``, the new optimizer would continue the old one's
    series, step windows and snapshots. :meth:`key` is a serial number checked against a weak
    reference, so no later object gets it; when an optimizer is freed its key's step count is kept
    (``final``) and ``freed`` callbacks drop what the recorder held for it (a snapshot of its
    parameters left by a ``step()`` that raised)."""

    def __init__(self) -> None:
        super().__init__()
        self.sites: Dict[int, Any] = {}  # key -> the line that created the optimizer
        self.final: Dict[int, int] = {}  # key -> its step count when it was freed
        self.freed: List[Callable[[int], None]] = []
        self._keys: Dict[int, Tuple[Any, int]] = {}  # id -> (weak reference, key)
        self._ids: Dict[int, int] = {}  # key -> id, while the optimizer is alive
        self._serial = itertools.count()

    def created(self, optimizer: Any) -> None:
        fresh = not self._is_known(optimizer)
        super().created(optimizer)
        if fresh:
            self._new_key(optimizer, site(sys._getframe(1)))

    def key(self, optimizer: Any) -> int:
        """This optimizer object's key: one dict lookup and a weak reference call per step."""
        entry = self._keys.get(id(optimizer))
        if entry is not None and entry[0]() is optimizer:
            return entry[1]
        if not self._is_known(optimizer):  # made before the monitor was installed: count from 0
            OptimizerSteps.created(self, optimizer)
        return self._new_key(optimizer, site(sys._getframe(1)))

    def steps(self, key: int) -> int:
        """The step count of the optimizer with this key, alive or freed."""
        oid = self._ids.get(key)
        return self.counts.get(oid, 0) if oid is not None else self.final.get(key, 0)

    def _is_known(self, optimizer: Any) -> bool:
        ref = self._refs.get(id(optimizer))
        return ref is not None and ref() is optimizer

    def _new_key(self, optimizer: Any, where: Any) -> int:
        oid, key = id(optimizer), next(self._serial)
        try:
            ref = weakref.ref(optimizer, self._on_gone(key, oid))
        except TypeError:  # no weak reference: keyed by id, as before (no torch optimizer is such)
            key = -1 - oid
            self.sites.setdefault(key, where)
            return key
        self._keys[oid] = (ref, key)
        self._ids[key] = oid
        self.sites[key] = where
        return key

    def _on_gone(self, key: int, oid: int) -> Callable[[Any], None]:
        def gone(_: Any) -> None:
            self._gone(key, oid)

        return gone

    def _gone(self, key: int, oid: int) -> None:
        """The optimizer with this key was freed (a weak reference callback)."""
        self.final[key] = self.counts.get(oid, 0)
        self._ids.pop(key, None)
        entry = self._keys.get(oid)
        if entry is not None and entry[1] == key:
            del self._keys[oid]
        for forget in self.freed:
            forget(key)
