"""A time budget for one debugger request, and what the statistics of a tensor will cost.

VS Code gives up on a hover after about half a second and a Variables page after a few; a stop
with twenty big tensors must still answer at once. The debugger plugin opens one
:class:`Budget` per DAP request (``with activate(Budget(0.3)):``) and every statistics
computation asks it first: a value whose estimated cost does not fit in what is left is not
computed now but *deferred* (the line says ``stats…``), to be computed when the user expands it
or at a later request, when the cheaper ones are already cached. Nothing is ever dropped
silently: :attr:`Budget.deferred` counts what was put off, so a container or a model whose check
was incomplete says so.

Costs are learned: each computation records its seconds per element for its dtype and device,
so after the first tensor the estimate is this machine's, under this load. Before any is known,
a deliberately pessimistic rate is used (a hover then shows ``stats…`` rather than stall).

Without an active budget (a program calling ``torchdoctor.summarize`` itself, the views'
collection) everything is computed, as before. Thread-safe: the budget lives in a context
variable, the rates behind a lock. Only the standard library.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from typing import Any, Dict, Hashable, Iterator, Optional, Tuple

# Seconds per element before this process measured any: pessimistic on purpose (about 4x a
# loaded 2-core machine's float32 rate), so an unknown 1e8-element tensor is deferred on a
# 150 ms hover rather than computed for a second.
DEFAULT_SECONDS_PER_ELEMENT = {"cpu": 5e-9, "device": 1e-9}
# Below this many elements a computation's time is mostly fixed overhead: do not learn from it.
LEARN_FROM = 100_000
# Weight of the newest measurement in the running estimate.
SMOOTHING = 0.5
# Fixed cost of any computation (a handful of small ops and one host transfer).
OVERHEAD_SECONDS = 2e-4
# A computation estimated below this is as cheap as the line's header: it is still done after
# the deadline, up to a grace of one more budget (so a small tensor listed after big ones keeps
# its statistics, and a request never takes more than twice its budget).
SMALL_SECONDS = 1e-3


class Budget:
    """A deadline shared by everything one request shows, and a count of what it deferred.

    ``seconds=None`` is no deadline (only the epoch is used). ``epoch`` is a token that stays
    the same object while the debuggee is paused at one stop and nothing was changed from the
    debug console; caches may trust values they computed under the same epoch.
    """

    def __init__(
        self, seconds: Optional[float], epoch: Optional[Hashable] = None, walk_share: float = 0.5, listing: bool = False
    ) -> None:
        self.seconds = seconds
        # A Variables page. A value put off by an earlier listing of the same stop is not tried
        # again by a later one (listing a stop twice must cost what plain debugpy's listing
        # costs); it is computed when expanded, hovered, or at the next stop.
        self.listing = listing
        # The share of what is left that one walk over many tensors (a model's NaN check) may
        # take: half in a Variables page, so the values after it still get theirs; all of it
        # for a hover, which shows one value.
        self.walk_share = walk_share
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.epoch = epoch
        self.deferred = 0

    def remaining(self) -> float:
        if self.deadline is None:
            return float("inf")
        return self.deadline - time.monotonic()

    # Set by the cache while it runs one budgeted computation: only those may be cut short.
    abortable = False

    def allows(self, estimate: float) -> bool:
        """True if a computation estimated at ``estimate`` seconds fits in what is left."""
        if self.deadline is None or self.seconds is None:
            return True
        remaining = self.remaining()
        return estimate <= remaining or (estimate <= SMALL_SECONDS and remaining > -self.seconds)

    def defer(self) -> None:
        self.deferred += 1


class OutOfTime(Exception):
    """Raised between blocks of a computation the cache started under a budget, once the
    deadline has passed; the cache turns it into a deferred (``stats…``) value."""


_CURRENT: "contextvars.ContextVar[Optional[Budget]]" = contextvars.ContextVar("torchdoctor_budget", default=None)


def current() -> Optional[Budget]:
    """The budget of the request being answered, or None (compute everything)."""
    return _CURRENT.get()


def current_epoch() -> Optional[Hashable]:
    active = _CURRENT.get()
    return None if active is None else active.epoch


def cut_walk() -> bool:
    """For a walk over many tensors (a model's NaN check): True, once counted as deferred, when
    the request is out of time; the walk stops there and its line says ``stats…``."""
    active = _CURRENT.get()
    if active is None or active.deadline is None or time.monotonic() <= active.deadline:
        return False
    active.defer()
    return True


def checkpoint() -> None:
    """Between two blocks: stop the computation if its request ran out of time."""
    active = _CURRENT.get()
    if active is not None and active.abortable and active.deadline is not None:
        if time.monotonic() > active.deadline:
            raise OutOfTime()


@contextlib.contextmanager
def activate(budget: Optional[Budget]) -> Iterator[Optional[Budget]]:
    """Make ``budget`` the current one inside the block (None: no deadline at all)."""
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


_RATES: Dict[Tuple[str, str], float] = {}
_RATES_LOCK = threading.Lock()


def cost_key(obj: Any) -> Optional[Tuple[Tuple[str, str], int]]:
    """``((dtype, device kind), elements read)`` of a tensor or array, or None if unknown."""
    try:
        if hasattr(obj, "layout") and hasattr(obj, "device"):  # a torch tensor
            device = "cpu" if obj.device.type == "cpu" else "device"
            return (str(obj.dtype), device), _tensor_elements(obj)
        if hasattr(obj, "dtype") and hasattr(obj, "size") and hasattr(obj, "strides"):  # numpy
            return ("np." + str(obj.dtype), "cpu"), _array_elements(obj)
    except Exception:
        return None
    return None


def _tensor_elements(t: Any) -> int:
    import sys

    torch = sys.modules["torch"]
    if t.layout != torch.strided:
        values = t._values() if t.layout == torch.sparse_coo else t.values()
        return int(values.numel())
    return _distinct_elements(int(t.numel()), tuple(t.shape), tuple(t.stride()), 1)


def _array_elements(a: Any) -> int:
    return _distinct_elements(int(a.size), tuple(a.shape), tuple(a.strides), int(a.itemsize) or 1)


def _distinct_elements(numel: int, shape: Tuple[int, ...], strides: Tuple[int, ...], unit: int) -> int:
    """Elements really in memory: an expanded (stride 0) dimension is read once, not n times."""
    if numel == 0:
        return 0
    for size, stride in zip(shape, strides):
        if stride == 0 and size > 1:
            numel //= size
    return numel


def estimate(obj: Any) -> float:
    """Seconds the statistics of ``obj`` will take here: learned rate x distinct elements."""
    key = cost_key(obj)
    if key is None:
        return OVERHEAD_SECONDS
    (kind, elements) = key
    with _RATES_LOCK:
        rate = _RATES.get(kind)
    if rate is None:
        rate = DEFAULT_SECONDS_PER_ELEMENT[kind[1]]
    return OVERHEAD_SECONDS + rate * elements


def record(obj: Any, seconds: float) -> None:
    """Learn from one computation of ``obj`` that took ``seconds``."""
    key = cost_key(obj)
    if key is None or key[1] < LEARN_FROM:
        return
    kind, elements = key
    rate = max(seconds - OVERHEAD_SECONDS, 0.0) / elements
    with _RATES_LOCK:
        old = _RATES.get(kind)
        _RATES[kind] = rate if old is None else SMOOTHING * rate + (1 - SMOOTHING) * old


def forget_rates() -> None:
    """Back to the pessimistic defaults (tests and benches start from a known state)."""
    with _RATES_LOCK:
        _RATES.clear()
