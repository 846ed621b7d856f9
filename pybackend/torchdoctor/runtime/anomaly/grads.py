"""Gradient checks after ``backward``: NaN/Inf and explosion, nearest the loss first.

The parameters of the watched models are listed in registration order; gradients flow the
other way, so they are examined from the last parameter to the first. The first non-finite
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


def judge(
    grads: List[Tuple[str, Any, Any, Any]], table: List[Tuple[float, float]], threshold: float
) -> Optional[Dict[str, Any]]:
    """The gradient finding of this step, or None: non-finite beats explosion."""
    found = {NONFINITE: [], EXPLOSION: []}
    for index in reversed(range(len(grads))):  # nearest the loss first
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
        "nearest_max_abs": magnitude(*table[-1]),
        "farthest_max_abs": magnitude(*table[0]),
        "largest_index": largest,
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
