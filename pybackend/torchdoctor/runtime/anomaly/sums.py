"""Per-sample sums over many values: large by construction, not an explosion.

A normalizing flow on images returns each sample's log-likelihood in nats, a sum over every
pixel: Glow's ``log_p`` over 3 x 64 x 64 values is about -1.2e4 at initialisation, and its
log-determinant a sum of such sums. Past the threshold of 1e4, the flow's output was called
exploding at step 0 (2026-12-07). What proves a sum: the output's autograd node is a sum over
dimensions (``x.flatten(1).sum(1)``), or a sum or difference of such sums and constants
(``logdet = logdet + det``). The output passes when its largest value, spread over the values
summed, is a modest term (``TERM_BOUND`` of the threshold): a learning rate too high makes the
terms themselves huge. Runs only after a hit.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, Dict, Optional, Tuple

TERM_BOUND = 0.001  # a term past this fraction of the threshold (10 nats at 1e4; Glow's are ~1): judged as before.
# It was 0.01: a collapsed flow's log-det of -60 nats a dimension passed (review, 2026-12-07)
_SUMS = frozenset(("SumBackward1",))
_ADDS = frozenset(("AddBackward0", "SubBackward0"))
_NODES = 16  # graph nodes read at most
SEEN_FACTOR = 4.0  # a proven sum's module, evaluated without a graph: passes up to this x its largest
MAX_MODULES = 256  # proven modules kept at most


def per_sample_sum(t: Any, largest: float, threshold: float) -> bool:
    """``t`` (a module's output past the threshold, ``largest`` its largest ``|value|``) is a sum
    over dimensions, or a sum of such sums, whose mean term is within ``TERM_BOUND x threshold``."""
    if t.dim() == 0 or not math.isfinite(largest):
        return False
    try:
        terms = _terms(t.grad_fn)
    except Exception:  # a node of an odd kind, saved values freed: nothing proves a sum
        return False
    return terms is not None and terms > 1 and largest <= terms * TERM_BOUND * threshold


def _terms(node: Any) -> Optional[int]:
    """How many values the sums of this node add up (the sums' counts added), or None when a node
    that is neither a sum over dimensions nor a sum of sums is reached."""
    terms, todo, read = 0, [node], 0
    while todo:
        node = todo.pop()
        read += 1
        if node is None or read > _NODES:
            if node is None:
                continue  # a constant operand (``torch.zeros(batch)`` a log-det starts from)
            return None
        name = type(node).__name__
        if name in _SUMS:
            sizes = node._saved_self_sym_sizes
            count = 1
            for dim in node._saved_dim:
                dim = dim - 2**64 if dim >= 2**63 else dim  # a negative dim is saved unsigned
                count *= int(sizes[dim])
            terms += count
        elif name in _ADDS:
            todo.extend(fn for fn, _ in node.next_functions)
        else:
            return None
    return terms


class ProvenSums:
    """Modules whose output a graph proved a per-sample sum, with the largest value it passed at:
    a flow evaluated under ``torch.no_grad()`` (its test set's log-likelihood) returns the same
    sums with no graph to read. They pass up to ``SEEN_FACTOR`` times that value."""

    def __init__(self) -> None:
        self._seen: Dict[int, Tuple["weakref.ref[Any]", float]] = {}

    def judge(self, module: Any, t: Any, largest: float, threshold: float) -> bool:
        entry = self._seen.get(id(module))
        known = entry is not None and entry[0]() is module
        if per_sample_sum(t, largest, threshold):
            if known or len(self._seen) < MAX_MODULES:
                self._seen[id(module)] = (weakref.ref(module), max(largest, entry[1] if known and entry else 0.0))
            return True
        return known and t.grad_fn is None and entry is not None and largest <= SEEN_FACTOR * entry[1]
