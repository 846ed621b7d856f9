"""Gradient checks after ``backward``: NaN/Inf and explosion, nearest the loss first.

Once a check fails, the parameters are ordered by their distance from the loss in its autograd
graph (:func:`loss_order`; registration order reversed when there is no graph to read). The first non-finite
gradient found that way is the one nearest the loss (NaN spreads towards the input, so the
nearest is where it entered the parameters); for explosions, the first past the threshold is
where the growth crossed it, and the largest is reported beside it.

On the CPU each gradient costs one min/max reduction and two scalars; on an accelerator the extremes
of all gradients are stacked on the device and cross to the host once (see :mod:`anomaly_device`).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple

from .detect import EXPLOSION, NONFINITE, extremes_device, magnitude, verdict

MAX_NODES = 20000


def extremes_of(tensors: List[Any]) -> List[Tuple[float, float]]:
    """``(min, max)`` of each tensor: device-side reductions, then one transfer per device."""
    torch = sys.modules["torch"]
    by_device: Dict[Any, List[int]] = {}
    for i, t in enumerate(tensors):
        by_device.setdefault(t.device, []).append(i)
    table: List[Tuple[float, float]] = [(0.0, 0.0)] * len(tensors)
    for indices in by_device.values():
        # float32 everywhere (MPS has no float64); a float64 gradient beyond 3e38 reads as Inf.
        stacked = torch.stack([extremes_device(tensors[i]).float() for i in indices])
        for i, (low, high) in zip(indices, stacked.tolist()):
            table[i] = (low, high)
    return table


def loss_order(loss: Any, params: List[Any]) -> Optional[List[int]]:
    """Indices of ``params`` nearest the loss first: the depth of each one's ``AccumulateGrad``
    node in the loss's autograd graph (its structure outlives ``backward``; the saved tensors
    do not matter here). None when the graph says nothing (no loss, no parameter found)."""
    root = getattr(loss, "grad_fn", None)
    if root is None:
        return None
    depth: Dict[int, int] = {}
    seen = {id(root): root}  # the nodes kept alive: a freed node's id is reused (loss_forensics._walk)
    frontier, level = [root], 0
    while frontier and len(seen) < MAX_NODES:  # breadth first: the first depth met is the least
        following = []
        for node in frontier:
            variable = getattr(node, "variable", None)
            if variable is not None and id(variable) not in depth:
                depth[id(variable)] = level
            for child, _ in getattr(node, "next_functions", ()):
                if child is not None and id(child) not in seen:
                    seen[id(child)] = child
                    following.append(child)
        frontier, level = following, level + 1
    if not depth:
        return None
    far = level + 1  # parameters outside this loss's graph: farthest, in reverse registration order
    return sorted(range(len(params)), key=lambda i: (depth.get(id(params[i]), far), -i))


def judge(
    grads: List[Tuple[str, Any, Any, Any]],
    table: List[Tuple[float, float]],
    threshold: float,
    order: Optional[List[int]] = None,
) -> Optional[Dict[str, Any]]:
    """The gradient finding of this step, or None: non-finite beats explosion. ``order``: the
    indices nearest the loss first (:func:`loss_order`); registration order reversed without it."""
    order = order if order is not None else list(reversed(range(len(grads))))
    found: Dict[str, List[int]] = {NONFINITE: [], EXPLOSION: []}
    for index in order:  # nearest the loss first
        kind = verdict(table[index][0], table[index][1], threshold)
        if kind in found:
            found[kind].append(index)
    kind = NONFINITE if found[NONFINITE] else EXPLOSION if found[EXPLOSION] else None
    if kind is None:
        return None
    index = found[kind][0]
    largest = max(range(len(grads)), key=lambda i: _sortable(magnitude(*table[i])))
    return {
        "kind": kind,
        "index": index,
        "bad_params": len(found[kind]),
        "max_abs": magnitude(*table[index]),
        "nearest_max_abs": magnitude(*table[order[0]]),
        "farthest_max_abs": magnitude(*table[order[-1]]),
        "nearest_index": order[0],
        "farthest_index": order[-1],
        "largest_index": largest,
        "largest_farther": order.index(largest) > 0,
        "largest_max_abs": magnitude(*table[largest]),
    }


def unscaled(table: List[Tuple[float, float]], scale: float) -> List[Tuple[float, float]]:
    """The extremes of gradients a GradScaler multiplied by ``scale``, as the optimizer sees them."""
    return [(low / scale, high / scale) for low, high in table]


def zero_grads(paths: List[str], table: List[Tuple[float, float]]) -> List[str]:
    """The paths whose gradient is exactly zero everywhere."""
    return [paths[i] for i, (low, high) in enumerate(table) if low == 0.0 and high == 0.0]


def _sortable(value: float) -> float:
    return -1.0 if value != value else value  # NaN sorts below everything
