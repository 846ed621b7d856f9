"""Helpers for conditional breakpoints ("Torch Doctor: Add Anomaly Breakpoint").

The command writes an ordinary VS Code conditional breakpoint whose condition calls one of these
(the module is on the debuggee's ``PYTHONPATH``; a condition is an expression, hence
``__import__``)::

    __import__('torchdoctor.runtime.anomaly.conditions', fromlist=['_']).any_nonfinite()
    __import__('torchdoctor.runtime.anomaly.conditions', fromlist=['_']).exceeds(loss, 100)
    __import__('torchdoctor.runtime.anomaly.conditions', fromlist=['_']).loss_spiked(loss, 10)
    __import__('torchdoctor.runtime.anomaly.conditions', fromlist=['_']).grad_norm_exceeds(model, 1000)

Each returns a bool and never raises: a failure returns False and is kept for
:func:`last_error` (a condition that raised would stop the debugger with pydevd's own error).
None of them imports torch: a tensor can only exist if the program imported it already.
Cost: one ``aminmax`` per tensor not seen before (tensors are remembered by identity and
version, so a loop that hits the line again with unchanged tensors reads nothing), values
cross to the host once per device.
"""

from __future__ import annotations

import math
import statistics
import sys
import weakref
from typing import Any, Dict, List, Mapping, Optional, Tuple

SPIKE_WINDOW = 20
SPIKE_MIN_HISTORY = 5
CACHE_LIMIT = 512

_errors: List[str] = []
_histories: Dict[Tuple[str, int], List[float]] = {}
_seen: Dict[int, Tuple[Any, int, bool]] = {}  # id(tensor) -> (weakref, version, non-finite?)


def any_nonfinite(frame_locals: Optional[Mapping[str, Any]] = None) -> bool:
    """True if a tensor among the caller's local variables (or in a list, tuple or dict held by
    one of them) has a NaN or an Inf. ``frame_locals`` defaults to the caller's locals: in a
    breakpoint condition, those of the line's frame."""
    try:
        scope = sys._getframe(1).f_locals if frame_locals is None else frame_locals
        return _any_bad(list(_tensors_in(scope.values())))
    except Exception as exc:
        return _failed("any_nonfinite", exc)


def exceeds(value: Any, threshold: float) -> bool:
    """True if ``|value| > threshold`` anywhere in it (a number or a tensor), or it holds NaN/Inf."""
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return not math.isfinite(value) or abs(value) > threshold
        low, high = _extremes([value])[0]
        return not (math.isfinite(low) and math.isfinite(high)) or max(-low, high) > threshold
    except Exception as exc:
        return _failed("exceeds", exc)


def loss_spiked(loss: Any, factor: float = 10.0) -> bool:
    """True if ``loss`` is NaN/Inf, or above ``factor`` times the median of the last 20 values
    this same line saw (once 5 are known). The value is then remembered for the next hit."""
    try:
        value = float(loss.detach().reshape(-1)[0].item()) if hasattr(loss, "detach") else float(loss)
        if not math.isfinite(value):
            return True
        history = _histories.setdefault(_call_site(), [])
        recent = history[-SPIKE_WINDOW:]
        spiked = (
            len(recent) >= SPIKE_MIN_HISTORY
            and statistics.median(recent) > 0
            and (value > factor * statistics.median(recent))
        )
        history.append(value)
        del history[:-SPIKE_WINDOW]
        return spiked
    except Exception as exc:
        return _failed("loss_spiked", exc)


def grad_norm_exceeds(model: Any, max_norm: float) -> bool:
    """True if the total L2 norm of ``model``'s parameter gradients is above ``max_norm``, or is
    NaN/Inf. Parameters without a gradient are left out; nothing is modified (unlike
    ``clip_grad_norm_``)."""
    try:
        torch = sys.modules["torch"]
        grads = [p.grad for p in model.parameters() if p.grad is not None and p.grad.layout == torch.strided]
        if not grads:
            return False
        with torch.no_grad():
            norms = [torch.linalg.vector_norm(g.detach(), 2, dtype=torch.float32) for g in grads]
            total = torch.linalg.vector_norm(torch.stack([n.to(norms[0].device) for n in norms]), 2).item()
        return not math.isfinite(total) or total > max_norm
    except Exception as exc:
        return _failed("grad_norm_exceeds", exc)


def last_error() -> Optional[str]:
    """The latest failure of a helper (it returned False instead of raising), or None."""
    return _errors[-1] if _errors else None


def _failed(name: str, exc: BaseException) -> bool:
    _errors.append(f"{name}: {type(exc).__name__}: {exc}")
    del _errors[:-20]
    return False


def _call_site() -> Tuple[str, int]:
    """The user's line whose breakpoint condition is running (pydevd's frames skipped)."""
    from .frames import user_frame

    frame = user_frame(sys._getframe(2))
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)


def _tensors_in(values) -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        return
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value[:64] if isinstance(v, torch.Tensor))
        elif isinstance(value, dict):
            yield from (v for v in list(value.values())[:64] if isinstance(v, torch.Tensor))


def _any_bad(tensors: List[Any]) -> bool:
    from .detect import checkable

    fresh = []
    for t in tensors:
        if not checkable(t):
            continue
        known = _seen.get(id(t))
        if known is not None and known[0]() is t and known[1] == _version(t):
            if known[2]:
                return True
            continue
        fresh.append(t)
    bad = False
    for t, (low, high) in zip(fresh, _extremes(fresh)):
        nonfinite = not (math.isfinite(low) and math.isfinite(high))
        _remember(t, nonfinite)
        bad = bad or nonfinite
    return bad


def _extremes(tensors: List[Any]) -> List[Tuple[float, float]]:
    from .grads import extremes_of

    torch = sys.modules["torch"]
    with torch.no_grad():
        return extremes_of(tensors) if tensors else []


def _remember(t: Any, nonfinite: bool) -> None:
    version = _version(t)
    if version is None:
        return  # an inference tensor has no version counter: read it again next time
    if len(_seen) >= CACHE_LIMIT:
        _seen.clear()
    _seen[id(t)] = (weakref.ref(t), version, nonfinite)


def _version(t: Any) -> Any:
    try:
        return t._version
    except RuntimeError:  # made under torch.inference_mode
        return None
