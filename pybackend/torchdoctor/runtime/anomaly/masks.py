"""Values a program writes on purpose through a mask: not an anomaly of the output holding them.

A policy head sets its illegal actions' logits to ``-inf`` or ``-1e9``, a pointer network its
visited cities', a model with a vocabulary mask its banned tokens' (``masked_fill(~legal, -1e9)``,
``torch.where(legal, logits, -inf)``, ``logits + (~legal) * -1e9``, ``logits + log(legal)``,
``torch.finfo(dtype).min`` as Hugging Face writes it). A softmax over such a row is finite and the
masked entries get no gradient: the program is correct. Reported as an Inf or exploding output,
each stopped the run in break mode (found on masked policies and pointer-network heads,
2026-12-06/07).

What proves a mask, from the strongest evidence to the weakest (an output is let pass only when
every value outside ``[-threshold, threshold]`` holds one and the same value, no NaN, and every row
keeps a value within it, so a softmax over each row stays finite):

- the output was written by a masking op (``masked_fill``, ``where``, ``x[mask] = v``), and its
  autograd node says where (:func:`_mask_written`): every out-of-range value is in those places;
- the output is the ``log_softmax`` of such an output (a masked entry's -inf stays where it was);
- the output was written by a scatter (:func:`_scatter_written`): a fill scattered at indices, or
  values scattered into a constant fill that holds every place not written;
- the output is a sum with an operand that has no graph (an additive mask: ``logits + mask``),
  or has no graph at all (``torch.no_grad()``: a rollout, an evaluation): the value is a *finite*
  fill-like constant (the dtype's largest magnitude, or a round ``d * 10**k`` such as ``-1e9``).
  An additive fill also keeps the values it masks (BERT's ``scores + (1 - mask) * -10000.0``):
  values within ``NEAR`` of one round fill count as that fill (:func:`_near_fill`), there only.
  ``±inf`` there is reported as before: a sum's other operand is not saved in the graph, and an
  Inf added from a buffer (a corrupted positional table) or a ``log`` of zeros looks the same as
  an additive ``-inf`` mask. So ``logits + log(legal)`` is still reported; ``-1e9`` masks are not.

A real overflow or a ``log(0)`` inside a model's own arithmetic is none of these: its values
differ, or its node is the op that made them.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Optional, Tuple

# Autograd nodes of the ops that write a constant through a mask: ``masked_fill``, ``where``,
# ``x[mask] = value``. What made the values, not a guess from them.
_MASKING = frozenset(("MaskedFillBackward0", "WhereBackward0", "IndexPutBackward0", "MaskedScatterBackward0"))
# ``x.scatter(dim, index, value)`` (a fill written at the indices) and ``full(fill).scatter(dim,
# index, src)`` (the values written into a fill: a top-k router's, a top-k sampler's gates).
_SCATTER = frozenset(("ScatterBackward0", "ScatterBackward1"))
# Ops that keep a masked entry's -inf where it was, the row's other values finite: a pointer
# network returns ``log_softmax(scores.masked_fill(visited, -inf))`` (2026-12-07).
_THROUGH = frozenset(("LogSoftmaxBackward0",))
# A sum or difference with one operand that has no graph: an additive mask.
_ADDITIVE = frozenset(("AddBackward0", "SubBackward0"))
# An additive fill's values lie within this fraction of it (the masked scores are small beside it).
NEAR = 0.01
# Masking ops read back through a chain (``masked_fill(a, -inf).masked_fill(b, -inf)``): a few.
_CHAIN = 4


def masked_output(t: Any, low: float, high: float, threshold: float) -> bool:
    """Every value of ``t`` beyond ``threshold`` (±Inf included) is a fill written on purpose
    through a mask (the module docstring says what proves it). Runs only after a hit."""
    if not _judgeable(t, low, high):
        return False
    return _judge(t, threshold, proof(t))


def _judgeable(t: Any, low: float, high: float) -> bool:
    return t.dim() > 0 and not math.isnan(low) and not math.isnan(high) and not t.dtype.is_complex


def proof(t: Any) -> Tuple[Optional[str], Any]:
    """What ``t``'s autograd node says wrote it, read now (``backward`` frees the node's saved
    tensors): ``("written", places)`` for a chain of masking ops, ``("scatter", (places, into
    fill))``, ``("additive", one operand without a graph)``, ``("nograd", None)``, or ``(None,
    None)``. Builds tensors on ``t``'s device and reads none back (no device sync)."""
    node = t.grad_fn
    name = type(node).__name__ if node is not None else None
    if name in _THROUGH and node.next_functions:  # read the mask below a log_softmax
        inner = node.next_functions[0][0]
        if inner is not None and type(inner).__name__ in _MASKING | _SCATTER:
            node, name = inner, type(inner).__name__
    try:
        if name in _MASKING:
            return "written", _mask_written(node, t.detach())
        if name in _SCATTER:
            return "scatter", _scatter_written(node, name, t)
    except Exception:  # saved tensors freed, an index form not read here: nothing proves a mask
        return None, None
    if name in _ADDITIVE:
        return "additive", _one_side_constant(node)
    if node is None and not t.requires_grad:
        return "nograd", None
    return None, None


def _judge(t: Any, threshold: float, found: Tuple[Optional[str], Any]) -> bool:
    """The values of ``t`` against what :func:`proof` found wrote them."""
    kind, evidence = found
    if kind is None:
        return False
    torch = sys.modules["torch"]
    values = t.detach()
    bad = ~(values.abs() <= threshold) if math.isfinite(threshold) else ~torch.isfinite(values)
    fill = _one_fill(values, bad)
    exact = fill is not None
    if not exact:  # an additive fill keeps the values it masks: BERT's ``scores + (1 - mask) * -10000.0``
        fill = _near_fill(values, bad, torch)
    if fill is None or not bool((~bad).any(-1).all()):  # a row all masked: its softmax is NaN (or uniform)
        return False
    if kind in ("written", "scatter") and math.isfinite(fill) and not fill_like(fill, t.dtype, torch):
        return False  # a fill computed from data (``masked_fill(m, x.sum())``), not a constant (review, 2026-12-07)
    if kind == "written":  # a masking op writes its fill exactly, and only where it wrote
        return exact and evidence is not None and bool((bad <= evidence).all())
    if kind == "scatter":
        written, into_fill = evidence
        return exact and bool((bad == ~written).all() if into_fill else (bad <= written).all())
    if kind == "additive" and not evidence:
        return False
    return math.isfinite(fill) and fill_like(fill, t.dtype, torch)  # additive, or no graph at all


# On an accelerator, outputs kept for :func:`masked_output` until the step's one read, at most
# this many values a step (past it, such outputs are judged by their extremes alone, as before).
KEPT_VALUES = 1 << 24


def mask_candidate(t: Any, version: int, kept_so_far: int) -> Optional[Tuple[Any, int, Any]]:
    """``(t, version, proof)`` to keep until the step's device read when a mask may have written
    ``t`` (its node is a masking op or a scatter, or a sum with a graph-less operand), else None.
    The proof (:func:`proof`) is read now: by the read, ``backward`` has freed the node's saved mask.

    On an accelerator each output's extremes are read once, after ``backward``, and the output is
    gone by then: an output a mask may have written is kept so :func:`masked_output` can judge it
    (a masked policy on a GPU was reported as an Inf output). Nothing else is kept: a residual sum
    has two operands with graphs, and every output under no_grad has no node at all (keeping those
    would hold the whole step's activations). ``kept_so_far`` values are kept already this step."""
    node = t.grad_fn
    if node is None or kept_so_far + t.numel() > KEPT_VALUES:
        return None
    name = type(node).__name__
    if name in _MASKING or name in _SCATTER or name in _THROUGH or (name in _ADDITIVE and _one_side_constant(node)):
        found = proof(t)
        return (t, version, found) if found[0] is not None else None
    return None


def judged_kept(kept: Optional[Tuple[Any, int, Any]], low: float, high: float, threshold: float) -> bool:
    """:func:`masked_output` of an output kept by :func:`mask_candidate`, unchanged since (its
    version): False when nothing was kept or it was written in place after the module returned."""
    if kept is None:
        return False
    t, version, found = kept
    try:
        if t._version != version:
            return False
    except RuntimeError:  # an inference tensor has no version counter: nothing says it is unchanged
        return False
    return _judgeable(t, low, high) and _judge(t, threshold, found)


def masked_logits(t: Any, low: float, high: float) -> bool:
    """Logits with their illegal entries set to -Inf by a masking op: :func:`masked_output` with
    only the non-finite values out of range (the name tests and older callers use)."""
    return masked_output(t, low, high, math.inf)


def _one_fill(values: Any, bad: Any) -> Optional[float]:
    """The one value every out-of-range entry holds, or None (none out of range, or several values)."""
    out = values[bad]
    if not out.numel():
        return None
    first = out[0]
    if not bool((out == first).all()):
        return None
    return float(first)


def _near_fill(values: Any, bad: Any, torch: Any) -> Optional[float]:
    """The round fill (``-10000.0``) every out-of-range value lies within ``NEAR`` of, added to
    the small values it masks (2026-12-07: a scorer returning BERT's additive ``-10000.0`` mask was
    an exploding output, ``max |x| = 10000``); None when they spread wider (an overflow)."""
    out = values[bad].double()
    if not out.numel() or not bool(torch.isfinite(out).all()):
        return None
    centre = float(out.median())
    if centre >= 0.0:  # a mask adds a large negative; outputs creeping past +1e4 are not one (review, 2026-12-07)
        return None
    power = 10.0 ** math.floor(math.log10(abs(centre)))
    fill = round(centre / power) * power  # one significant digit: -10000.3 -> -10000
    if float((out - fill).abs().max()) > NEAR * abs(fill):
        return None
    return fill


def fill_like(value: float, dtype: Any, torch: Any) -> bool:
    """±Inf, the dtype's largest magnitude, or a round ``d * 10**k`` (``-1e9``, ``-1e4``, ``3e38``)
    as the dtype stores it: what people write as a mask's fill. An overflow lands on none of them
    (it gives Inf, which only a masking op's node lets pass)."""
    size = abs(value)
    if math.isinf(size) or size == torch.finfo(dtype).max:
        return True
    if size == 0.0:
        return False
    k = math.floor(math.log10(size))
    for power in (k, k - 1, k + 1):  # log10 rounds near powers of ten
        digit = round(size / 10.0**power)
        if 1 <= digit <= 9 and size == float(torch.tensor(digit * 10.0**power, dtype=dtype)):
            return True
    return False


def _one_side_constant(node: Any) -> bool:
    """A sum's node whose one operand has a graph and the other none (a constant or a mask tensor)."""
    inputs = [fn for fn, _ in node.next_functions[:2]]
    return len(inputs) == 2 and (inputs[0] is None) != (inputs[1] is None)


def _scatter_written(node: Any, name: str, t: Any) -> Tuple[Any, bool]:
    """(where a scatter wrote, whether it wrote into a fill). ``x.scatter(d, idx, -inf)``: the fill
    is where it wrote, so every out-of-range value must be there. ``full_like(x, -inf).scatter(d,
    idx, top)`` (a mixture of experts' top-k gates, a top-k sampler's logits): the tensor written
    into has no graph (a constant), and every place the scatter did not write, and only those, must
    hold the fill; a ``-inf`` among the written values (``log`` of a zero gate) is not the fill
    (2026-12-07)."""
    torch = sys.modules["torch"]
    dim = node._saved_dim
    dim = dim - 2**64 if dim >= 2**63 else dim  # a negative dim is saved as an unsigned 64-bit value
    written = torch.zeros(t.shape, dtype=torch.bool, device=t.device).scatter_(dim, node._saved_index, True)
    if name == "ScatterBackward1":
        return written, False
    if node.next_functions[0][0] is not None:
        raise ValueError("values scattered into a tensor with a graph: not a fill")
    return written, True


def _mask_written(node: Any, values: Any) -> Optional[Any]:
    """Where the chain of masking ops ending at ``node`` wrote its fill value, as a bool tensor of
    ``values``' shape (on its device; no value is read back). A -Inf outside it was there before the mask: ``log(p).masked_fill(pad, 0)``
    or ``where(pad, 0, log(p))`` with ``p`` holding zeros is a masking node over a real -Inf, and
    the node's name alone let it pass (review, 2026-12-06)."""
    torch = sys.modules["torch"]
    covered = torch.zeros(values.shape, dtype=torch.bool, device=values.device)
    for _ in range(_CHAIN):
        found = _written(node, values, torch) if node is not None and type(node).__name__ in _MASKING else None
        if found is None:
            break
        written, node = found
        covered |= written
    return covered  # where none wrote, it holds no True: every out-of-range value then fails


def _written(node: Any, values: Any, torch: Any) -> Optional[Tuple[Any, Any]]:
    """(where this masking node wrote, the node of the tensor it wrote into) or None."""
    name, inputs = type(node).__name__, node.next_functions
    if name == "IndexPutBackward0":  # x[mask] = v, x[idx] = v
        written = torch.zeros(values.shape, dtype=torch.bool, device=values.device)
        written.index_put_(tuple(node._saved_indices), torch.tensor(True, device=values.device))
        return written, inputs[0][0]
    if name != "WhereBackward0":  # masked_fill, masked_scatter: the mask is where they wrote
        return torch.broadcast_to(node._saved_mask, values.shape), inputs[0][0]
    # where(cond, a, b): the fill is the side without a graph (a constant); both or neither: no mask
    cond = torch.broadcast_to(node._saved_condition, values.shape)
    a, b = (inputs[i][0] if len(inputs) > i else None for i in (0, 1))
    if (a is None) == (b is None):
        return None
    return (cond, b) if a is None else (~cond, a)
