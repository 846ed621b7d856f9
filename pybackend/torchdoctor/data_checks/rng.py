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
        _seed_torch(torch, seed)


# devices whose seed ``torch.manual_seed`` queues, with the caller's stack formatted, until they are initialised
_LAZY_DEVICES = ("cuda", "xpu", "mtia")


def _seed_torch(torch: Any, seed: int) -> None:
    """What ``torch.manual_seed(seed)`` does for the generators in use: the CPU's, MPS's and those of the
    devices already initialised. Not ``torch.manual_seed`` itself: for CUDA (XPU, MTIA) not initialised yet,
    on any machine, it formats the caller's stack to queue the seed (0.15 ms a call, 0.6 ms from a check's
    depth: seeding each of 2,000 samples again for duplicates took 18x the plain loop's time), and the
    queued seed would reach the user's generator if their program initialises the device after the check.
    A device a draw uses is initialised by the split's first draw, before any seeded draw."""
    custom = getattr(torch._C, "_get_privateuse1_backend_name", lambda: "privateuseone")()
    if custom != "privateuseone" and hasattr(torch, custom):  # a custom device: seeded as torch seeds it
        torch.manual_seed(seed)
        return
    torch.default_generator.manual_seed(seed)
    mps = getattr(torch, "mps", None)
    if mps is not None and hasattr(mps, "manual_seed") and not getattr(mps, "_is_in_bad_fork", lambda: False)():
        mps.manual_seed(seed)  # a no-op without MPS
    for name in _LAZY_DEVICES:
        device = getattr(torch, name, None)
        if device is not None and getattr(device, "is_initialized", lambda: False)():  # False in a bad fork
            device.manual_seed_all(seed)
