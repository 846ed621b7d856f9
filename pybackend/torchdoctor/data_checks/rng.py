"""Save and restore every global RNG a dataset may draw from: ``random``, numpy's, torch's (CPU, CUDA).

Iterating a user's DataLoader or calling a random transform advances the global generators;
a check must leave the user's program exactly as it found it (a check run while paused in the
debugger, a notebook), so ``preserved_rng()`` puts every state back, exception or not.
``seeded(seed)`` makes one draw reproducible (used to hash augmented samples for duplicates).
"""

from __future__ import annotations

import contextlib
import random
import sys
from typing import Any, Callable, Iterator, Optional


def _states() -> dict[str, Any]:
    states: dict[str, Any] = {"random": random.getstate()}
    np = sys.modules.get("numpy")
    if np is not None:
        states["numpy"] = np.random.get_state()
    torch = sys.modules.get("torch")
    if torch is not None:
        states["torch"] = torch.get_rng_state()
        cuda = getattr(torch, "cuda", None)
        if cuda is not None and cuda.is_available() and cuda.is_initialized():
            states["cuda"] = cuda.get_rng_state_all()
    return states


def _restore(states: dict[str, Any]) -> None:
    random.setstate(states["random"])
    if "numpy" in states:
        sys.modules["numpy"].random.set_state(states["numpy"])
    torch = sys.modules.get("torch")
    if torch is not None and "torch" in states:
        torch.set_rng_state(states["torch"])
        if "cuda" in states:
            torch.cuda.set_rng_state_all(states["cuda"])


@contextlib.contextmanager
def preserved_rng(restore: Optional[Callable[[], bool]] = None) -> Iterator[None]:
    """Within: the global generators are put back on the way out, unless ``restore()`` says no (a
    draw the check gave up on, ``stuck.py``, which put them back itself when it did)."""
    states = _states()
    try:
        yield
    finally:
        if restore is None or restore():
            _restore(states)


def states() -> dict[str, Any]:
    """Every global generator's state, for ``restore``."""
    return _states()


def restore(saved: dict[str, Any]) -> None:
    _restore(saved)


def seed_all(seed: int) -> None:
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
