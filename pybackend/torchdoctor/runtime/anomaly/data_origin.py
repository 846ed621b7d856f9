"""Whether the batch in the user's loop holds NaN/Inf, asked once a gradient or the loss is
already non-finite and no module output showed it first.

Some models stay finite forward on bad data: an LSTM's gates saturate on Inf (sigmoid and tanh
of Inf are finite), so the first thing that goes wrong is the NaN gradient of its input weights
(Inf x 0 in the backward), and the report would name the layer, not the data. A NaN target given
to a functional loss reaches no module at all. The tensors of the loop's frame (and of the frame
that called it, when the loop is a helper) that come from outside the model (no ``grad_fn``, no
``requires_grad``, not a parameter: the batch and its labels) are counted. Runs after a hit only,
so it may read whole tensors; it never keeps one.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .detect import bad_counts, checkable
from .frames import is_internal, module_call_codes, outermost_call

MAX_TENSORS = 16  # tensors looked at: a loop's batch is a few of them
MAX_ITEMS = 8  # items of a tuple, list or dict in a local (``batch = (x, y)``, ``batch["pixel_values"]``)
MAX_ELEMENTS = 1 << 27  # bigger tensors are left out (a whole dataset kept in a local)
FRAMES = 2  # the frame that called backward(), and its caller
FORWARD_FRAMES = 8  # from inside nested forward()s out to the loop that called the model


def nonfinite_data(frame: Optional[FrameType], frames: int = FRAMES) -> List[Dict[str, Any]]:
    """``[{"name": "images", "counts": {...}}]``: the data tensors with NaN/Inf of the first ``frames``
    user frames from ``frame`` outward."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    found: Dict[Any, Dict[str, Any]] = {}  # one per memory: a view (``x = data.view(-1, 784)``) is the same data
    seen: set = set()
    for name, t in _data_tensors(torch, frame, frames):
        if id(t) in seen or len(seen) >= MAX_TENSORS:
            continue
        seen.add(id(t))
        counts = bad_counts(t)
        if not (counts["nan"] or counts["posinf"] or counts["neginf"]) or _by_design(torch, t, counts):
            continue
        where = _storage(t) or id(t)
        kept = found.get(where)
        # the smallest wins: the batch sliced from a whole table (``x[start:start + 64]``), not the table
        if kept is None or counts["numel"] < kept["counts"]["numel"]:
            found[where] = {"name": name, "counts": counts}
    return _one_per_name(list(found.values()))


def _one_per_name(found: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One entry per name: the loop's ``x`` and the ``x`` its helper or forward made of it (``x =
    x.float()``, other memory) are one datum to the reader; "`x` ..., `x` ..." read as a repeat. The
    smallest is kept (the batch, not a table it was copied from), else the first: the outermost
    frame's, the data as the loop holds it."""
    named: Dict[str, Dict[str, Any]] = {}
    for entry in found:
        kept = named.get(entry["name"])
        if kept is None or entry["counts"]["numel"] < kept["counts"]["numel"]:
            named[entry["name"]] = entry
    return list(named.values())


def data_scale(frame: Optional[FrameType], frames: int = FORWARD_FRAMES) -> float:
    """The largest finite ``|value|`` of the loop's data tensors (0.0 when none): the scale a model
    fitting raw targets (house prices in dollars, counts in thousands) is meant to reach. Asked
    only after an output went past the threshold."""
    torch = sys.modules.get("torch")
    if torch is None:
        return 0.0
    outside, fed = _outside_model(torch, frame)
    scale, seen = 0.0, 0
    for _, t in _data_tensors(torch, outside, frames):
        if seen >= MAX_TENSORS:
            break
        if _storage(t) in fed:
            continue  # the model's own input: unnormalised inputs are the bug, not a scale to reach
        seen += 1
        with torch.no_grad():
            size = t.detach().abs()
            size = torch.where(torch.isfinite(size), size, torch.zeros((), dtype=size.dtype))
            if size.numel():
                scale = max(scale, float(size.max()))
    return scale


def _outside_model(torch: Any, frame: Optional[FrameType]) -> Tuple[Optional[FrameType], set]:
    """The frame that called the outermost module on this stack (the loop), and the storages of
    the tensors passed to that call. A module's forward holds activations (under no_grad, graph-less
    like data) and its inputs are what it scales up, not targets: a model fed int16 audio (32767)
    under no_grad passed every layer up to 3e5 (review, 2026-12-07). ``frame`` itself when no module
    is being called."""
    # the hook's own stack: ``frame`` is the user's, outside torch's calls
    call = outermost_call(sys._getframe(1), own_forward=False)
    if call is None:
        return frame, set()
    code, local = call.f_code, call.f_locals
    if code in module_call_codes(torch):
        inputs = list(local.get("args", ())) + list((local.get("kwargs") or {}).values())
    else:  # ``model.forward(x)`` called directly: its arguments
        inputs = [local.get(n) for n in code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]]
    fed = set()
    for i, value in enumerate(inputs[:MAX_ITEMS]):
        for _, t in _tensors(torch, str(i), value):
            fed.add(_storage(t))
    return call.f_back, fed


def _storage(t: Any) -> Any:
    try:
        return (str(t.device), t.untyped_storage().data_ptr())
    except Exception:  # noqa: BLE001 - a tensor without storage: told apart by nothing
        return None


def _by_design(torch: Any, t: Any, counts: Dict[str, int]) -> bool:
    """Not a batch: a one-value tensor (a sentinel ``best = torch.tensor(inf)``, a running mean of
    the loss that went NaN a step before), or an additive attention mask (0 and -Inf, as
    ``generate_square_subsequent_mask`` makes)."""
    if counts["numel"] == 1:
        return True
    if counts["nan"]:
        return False
    if counts["posinf"]:
        return False
    with torch.no_grad():
        finite = t[torch.isfinite(t)]
        return bool((finite == 0).all())


def _data_tensors(torch: Any, frame: Optional[FrameType], frames: int) -> Iterator[Tuple[str, Any]]:
    # outermost first: the loop's ``data`` reads better than the ``x`` a forward made of it
    for f in reversed(list(_user_frames(frame, frames))):
        try:
            local = dict(f.f_locals)
        except Exception:  # noqa: BLE001 - a frame's locals are the user's objects
            continue
        # plain names first: ``y`` reads better than ``batch[1]`` for the same tensor
        for plain in (True, False):
            for name, value in local.items():
                if isinstance(value, torch.Tensor) is plain:
                    for label, t in _tensors(torch, name, value):
                        if _is_data(torch, t):
                            yield label, t


def _user_frames(frame: Optional[FrameType], frames: int) -> Iterator[FrameType]:
    n = 0
    while frame is not None and n < frames:
        if not is_internal(frame):
            yield frame
            n += 1
        frame = frame.f_back


def _tensors(torch: Any, name: str, value: Any) -> Iterator[Tuple[str, Any]]:
    """The tensors of one local: itself, or the first items of a tuple, list or dict of str keys."""
    if isinstance(value, torch.Tensor):
        yield name, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value[:MAX_ITEMS]):
            if isinstance(item, torch.Tensor):
                yield f"{name}[{i}]", item
    elif isinstance(value, dict):
        for i, (key, item) in enumerate(value.items()):
            if i >= MAX_ITEMS:
                break
            if isinstance(key, str) and isinstance(item, torch.Tensor):
                yield f"{name}[{key!r}]", item


def _is_data(torch: Any, t: Any) -> bool:
    """A plain dense float tensor (:func:`detect.checkable`, no subclass) made outside autograd:
    data, not a model's output or parameter."""
    try:
        return (
            type(t) is torch.Tensor
            and checkable(t)
            and t.grad_fn is None
            and not t.requires_grad
            and t.numel() <= MAX_ELEMENTS
        )
    except Exception:  # noqa: BLE001 - a tensor of an odd kind (functorch, fake): not read
        return False
