"""The per-tensor test the anomaly watch runs on module outputs and gradients.

One min/max reduction answers all three questions at once: NaN and Inf propagate through it (so
finite extremes prove the tensor clean), ``max(-min, max)`` is the largest magnitude, and
``min == max == 0`` means every value is zero. Nothing else is read on the hot path; exact
NaN/Inf counts are taken only for the report, after something is already wrong.

Only plain dense floating tensors are tested (``torch.Tensor`` and ``nn.Parameter``): integer
and bool tensors cannot hold NaN, and tensor subclasses (fake, functional, distributed tensors)
have no data we may read.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

NONFINITE = "nonfinite"
EXPLOSION = "explosion"
ZERO = "zero"

# Outputs are walked this deep and this wide (an LSTM returns (out, (h, c)); a transformers
# ModelOutput is a dict): enough for real models, bounded for odd ones.
MAX_DEPTH = 3
MAX_TENSORS = 16


def checkable(t: Any) -> bool:
    torch = sys.modules["torch"]
    return (
        (type(t) is torch.Tensor or type(t) is torch.nn.Parameter)
        and t.layout == torch.strided
        and not t.is_nested  # a strided nested tensor: no reduction reads it (forward._unreadable)
        and (t.dtype.is_floating_point or t.dtype.is_complex)
        and not t.is_meta
        and t.numel() > 0
    )


# On the CPU (torch 2.13, one thread) ``amin`` + ``amax`` read big tensors ~35% faster than one
# ``aminmax``; below this many elements the single call's lower overhead wins.
SPLIT_AT = 1 << 15
# (float32, float64) and torch.linalg.vector_norm, looked up once: :func:`quick_squares` runs
# for most outputs of a large model, where each lookup and each tensor made per call shows.
_QUICK: Tuple[Any, ...] = ()
# Below this many values the exact extremes cost about what the one pass does, and they let a
# ReLU after a Linear take its bounds from the Linear's (passthrough) instead of a read.
QUICK_FROM = 1 << 14


def _quick_setup() -> Tuple[Any, ...]:
    global _QUICK
    torch = sys.modules["torch"]
    _QUICK = ((torch.float32, torch.float64), torch.linalg.vector_norm)
    return _QUICK


def _reduce(t: Any):
    torch = sys.modules["torch"]
    data = t.detach()  # reductions of a detached view record no autograd history
    if data.dtype.is_complex:
        data = torch.view_as_real(data)  # real and imaginary parts: a view, no copy
    if data.is_cpu and data.numel() >= SPLIT_AT:
        return torch.amin(data), torch.amax(data)
    return torch.aminmax(data)


def quick_bound(t: Any) -> Optional[float]:
    """The sum of squares of a contiguous float32/float64 CPU tensor, in one pass; None where it
    does not apply. Not much faster than ``amin`` + ``amax`` per value (within 15% of them on 2^18
    values, a Zen 4 EPYC, 2026-12-06; an older note here said 30x): what it saves is the exact
    extremes' read in the usual case, and what it proves is below.

    When it is finite, above 0 and at most ``threshold**2``, every value is finite and
    ``|x| <= sqrt(it) <= threshold``: the tensor passes without reading its extremes. NaN, Inf,
    an overflow of the squares, a large norm or all zeros (or an underflow) go to the exact check.
    """
    if not t.is_cpu or t.numel() < QUICK_FROM:
        return None
    return quick_squares(t)


def quick_squares(t: Any) -> Optional[float]:
    """:func:`quick_bound` of a CPU tensor already known to hold ``QUICK_FROM`` values or more.

    The 2-norm squared: ATen's ``vector_norm``, not BLAS's ``dot(x, x)``. With the watch reading
    ~33 module outputs of 16k-131k values a step, a nanoGPT-shaped model (4 layers, width 128, one
    thread) ran 290-570 µs a step faster (1-1.5%) in each of five interleaved A/B runs; at width
    256 three runs went either way within 0.6%, the CNN and the MLP of ``bench_anomaly.py`` were
    the same either way (2026-12-06).
    """
    dtypes, vector_norm = _QUICK or _quick_setup()
    if t.dtype not in dtypes or not t.is_contiguous():
        return None
    # The norm of all dimensions at once: no flattening view (a tensor made per call) is needed
    # for a contiguous tensor. With the lookups above done once, the median check of a big output
    # took 2-3 µs less inside the gpt-4x128 loop of bench_anomaly.py (12-17 µs instead of 14-21,
    # five interleaved runs in one process, a loaded 2-core box, 2026-12-07). The detached alias
    # records no autograd history.
    norm = vector_norm(t.detach()).item()
    return norm * norm  # a Python float: inf where the square overflows; NaN stays NaN


# Up to this many gradients, one ``.item()`` per norm costs less than a stack and one ``tolist()``.
ITEMS_UP_TO = 12


def grad_norms(grads: List[Any]) -> List[float]:
    """Each gradient's 2-norm (>= its largest |g|; NaN or Inf when it holds one), all in one call
    and one conversion: a bound the usual case needs, read exactly only when it is not enough."""
    torch = sys.modules["torch"]
    norms = torch._foreach_norm(grads, 2)  # gradients record no history: no detach needed
    if len(norms) <= ITEMS_UP_TO:
        return [n.item() for n in norms]
    # stack promotes mixed dtypes (float16 and float32 norms stack as float32): one host transfer
    return torch.stack(norms).tolist()


def grad_bounds(grads: List[Any]) -> List[Tuple[float, float]]:
    """``(-n, n)`` with ``n`` each gradient's 2-norm (:func:`grad_norms`)."""
    return [(-n, n) for n in grad_norms(grads)]


def extremes_device(t: Any) -> Any:
    """``[min, max]`` of ``t`` as a 2-element tensor on ``t``'s device (no host sync)."""
    return sys.modules["torch"].stack(_reduce(t))


# Read buffers of two values, per (thread, dtype): ``aminmax`` writes its min and max into one,
# which crosses to the host in one ``tolist()`` instead of two ``.item()``. Per thread: a model
# run from two threads must not share one.
_PAIRS: Dict[Tuple[int, Any], Tuple[Any, Tuple[Any, Any]]] = {}
MAX_PAIRS = 64
_thread_id = threading.get_ident
# torch's is_grad_enabled, _set_grad_enabled, aminmax and _are_functorch_transforms_active (bound
# with the first buffer)
_GRAD_MODE: List[Any] = []


def _no_transforms() -> bool:
    """A torch without ``_are_functorch_transforms_active``: no transform to ask about."""
    return False


def _pair(dtype: Any) -> Tuple[Any, Tuple[Any, Any]]:
    """The calling thread's two-value buffer of ``dtype`` and its two 0-d views (the ``out=``)."""
    key = (_thread_id(), dtype)
    found = _PAIRS.get(key)
    if found is None:
        torch = sys.modules["torch"]
        transforming = getattr(torch._C, "_are_functorch_transforms_active", _no_transforms)
        _GRAD_MODE[:] = [torch._C.is_grad_enabled, torch._C._set_grad_enabled, torch.aminmax, transforming]
        with torch.inference_mode(False), torch.no_grad():  # a plain tensor: writable in and out of both modes
            buffer = torch.empty(2, dtype=dtype)
            found = (buffer, (buffer[0], buffer[1]))
        if len(_PAIRS) >= MAX_PAIRS:  # threads come and go: forget theirs
            _PAIRS.clear()
        _PAIRS[key] = found
    return found


def cpu_extremes(t: Any, n: int) -> Tuple[float, float]:
    """:func:`extremes` of a real floating CPU tensor of ``n`` values (n > 1), known to be all that.

    Below ``SPLIT_AT`` values: one ``aminmax`` into the thread's read buffer with autograd off
    (cheaper than a detached view: an ``out=`` records no history then), one ``tolist()``. Runs
    for most module outputs: the buffer is looked up here, :func:`_pair` makes it once."""
    if n >= SPLIT_AT:
        torch = sys.modules["torch"]
        data = t.detach()  # reductions of a detached view record no autograd history
        return torch.amin(data).item(), torch.amax(data).item()
    found = _PAIRS.get((_thread_id(), t.dtype)) or _pair(t.dtype)
    grad_enabled, set_grad_enabled, aminmax, transforming = _GRAD_MODE
    if transforming():
        # Inside torch.func.grad/vmap the output is a wrapper: torch 2.8 wrote it into our buffer's
        # views and left the buffer without storage, so the next check of any output aborted the
        # process (Fatal Python error, seen under Python 3.9). The plain reads, as out= refused.
        low, high = aminmax(t.detach())
        return low.item(), high.item()
    enabled = grad_enabled()
    set_grad_enabled(False)
    try:
        aminmax(t, out=found[1])
    except RuntimeError:  # a tensor that out= does not take: the plain reads
        low, high = aminmax(t)
        return low.item(), high.item()
    finally:
        set_grad_enabled(enabled)
    low, high = found[0].tolist()
    return low, high


def extremes(t: Any) -> Tuple[float, float]:
    """``(min, max)`` of ``t`` as host floats: one read of the data, two scalars to the host."""
    if t.numel() == 1 and not t.dtype.is_complex:
        value = t.item()  # one value (a loss): its own extremes, one read and no reduction
        return value, value
    low, high = _reduce(t)
    return low.item(), high.item()


def verdict(low: float, high: float, threshold: float) -> Optional[str]:
    """What the extremes say: NONFINITE, EXPLOSION (beyond ``threshold``), ZERO, or None (fine)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return NONFINITE
    if max(-low, high) > threshold:
        return EXPLOSION
    if low == 0.0 and high == 0.0:
        return ZERO
    return None


def magnitude(low: float, high: float) -> float:
    if math.isnan(low) or math.isnan(high):
        return math.nan
    return max(-low, high)


def iter_tensors(obj: Any, depth: int = 0) -> Iterator[Any]:
    """The checkable tensors in a module's output (or inputs), in order, bounded."""
    yielded = 0
    for t in _walk(obj, depth):
        if yielded >= MAX_TENSORS:
            return
        yielded += 1
        yield t


def _walk(obj: Any, depth: int) -> Iterator[Any]:
    torch = sys.modules["torch"]
    if isinstance(obj, torch.Tensor):
        if checkable(obj):
            yield obj
        return
    if depth >= MAX_DEPTH:
        return
    if isinstance(obj, (tuple, list)):
        items = obj[:MAX_TENSORS]
    elif isinstance(obj, dict):
        items = list(obj.values())[:MAX_TENSORS]
    else:
        return
    for item in items:
        yield from _walk(item, depth + 1)


def bad_counts(t: Any) -> Dict[str, int]:
    """Exact NaN, +Inf and -Inf counts and the element count (only for the report)."""
    torch = sys.modules["torch"]
    with torch.no_grad():
        data = t.detach()
        if data.dtype.is_complex:
            data = torch.view_as_real(data)
        counts = [torch.isnan(data).sum(), (data == math.inf).sum(), (data == -math.inf).sum()]
        try:
            nan, posinf, neginf = (int(v) for v in torch.stack(counts).tolist())  # one read
        except RuntimeError:  # under torch.func.grad in torch 2.8 tolist() has no storage to read; item() does
            nan, posinf, neginf = (int(c.item()) for c in counts)
    return {"nan": nan, "posinf": posinf, "neginf": neginf, "numel": int(t.numel())}
