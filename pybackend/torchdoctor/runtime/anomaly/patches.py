"""What the anomaly watch and the training monitor both install in the user's torch, and how
they take it out again: hook handles, and functions replaced on their owners."""

from __future__ import annotations

from typing import Any, Callable, List


class Patches:
    """A mixin: ``_handles`` (torch hook handles) and ``_patched`` (replaced attributes), both
    set to ``[]`` by the class's own ``__init__``."""

    _handles: List[Any]
    _patched: List[Any]

    def detach(self) -> None:
        """Remove every hook, and put back every replaced function still ours."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for owner, name, original, wrapper in reversed(self._patched):
            if getattr(owner, name, None) is wrapper:  # someone patched over us: leave theirs
                setattr(owner, name, original)
        self._patched = []

    def _patch(self, owner: Any, name: str, make: Callable[[Callable], Callable]) -> None:
        original = getattr(owner, name)
        wrapper = make(original)
        setattr(owner, name, wrapper)
        self._patched.append((owner, name, original, wrapper))
