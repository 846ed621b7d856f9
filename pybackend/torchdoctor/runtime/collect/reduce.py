"""Reductions on the hot path, for the passes the time budget samples: device-side, no host sync.

A module output right after its forward (still in cache): ``aminmax``, ``sum``, the 2-norm and
the count of non-zeros (plus, for ReLU-like modules, the positions alive for some sample). They
are written into a row of a :class:`Rows` table that lives where the output lives, and reach the
host only when a snapshot is taken (:func:`activation_from_row`): min, max, mean and the
fraction of exact zeros are exact up to float rounding; the standard deviation comes from the
sums (in float32 for float32 data), bounded by the exact range, so a constant output reads std
0; NaN/Inf are known to be present (min/max/sum not finite) but not counted.

A gradient at the end of a backward: ``_foreach_norm`` of orders 1, 2 and inf, into a table too.

Two costs learned the hard way on the CPU: ``count_nonzero`` branches per element and takes 15x
longer on a ReLU's output (zeros and non-zeros alternate at random), so non-zeros are counted as
``t.bool().sum()``; and dozens of small result tensors kept from one step to the next scatter
the allocator's free memory between the activations and make the next step's allocations fault
in fresh pages, so results go into tables allocated once and reused (the temporaries of the
reductions are freed at once).

Floating tensors only; everything under ``torch.no_grad()``.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

ACTIVATION_WIDTH = 6  # min, max, sum, norm2, nonzero, live units (-1: not counted)
GRAD_WIDTH = 3  # sum|g|, ‖g‖, max|g|


def reducible(t: Any, torch: Any) -> bool:
    return t.is_floating_point() and t.layout == torch.strided and not t.is_meta and t.numel() > 0


def relu_like(type_name: str) -> bool:
    """Activations whose dead units are worth counting (outputs >= 0, exact zeros when off)."""
    t = type_name.lower()
    return t == "threshold" or ("relu" in t and not any(k in t for k in ("leaky", "prelu", "rrelu")))


class Rows:
    """Tables of float64 rows (float32 on MPS), one per device, grown by doubling, reused."""

    def __init__(self, torch: Any, width: int) -> None:
        self._torch = torch
        self.width = width
        self._tables: Dict[Any, Any] = {}

    def table(self, device: Any, rows: int) -> Any:
        """The table of ``device``, with at least ``rows`` rows."""
        table = self._tables.get(device)
        if table is None or rows > table.shape[0]:
            size = max(16, 1 << max(rows - 1, 1).bit_length())
            dtype = self._torch.float32 if device.type == "mps" else self._torch.float64
            grown = self._torch.zeros((size, self.width), dtype=dtype, device=device)
            if table is not None:
                grown[: table.shape[0]].copy_(table)
            table = self._tables[device] = grown
        return table

    def row(self, device: Any, index: int) -> Any:
        return self.table(device, index + 1)[index]


def activation_partials(torch: Any, t: Any, units: bool, row: Any) -> Any:
    """Write ``(min, max, sum, norm2, nonzero, live units | -1)`` of ``t`` into ``row``.

    ``t`` floating, non-empty. ``units`` (ReLU-like outputs, >= 0): also how many positions of a
    sample (all dims but the batch dim 0) are non-zero for at least one sample of the batch.
    """
    acc = torch.float32 if t.element_size() < 4 else None
    low, high = torch.aminmax(t)
    total = torch.sum(t, dtype=acc) if acc is not None else torch.sum(t)
    norm = torch.linalg.vector_norm(t, 2, dtype=acc) if acc is not None else torch.linalg.vector_norm(t, 2)
    row[:4].copy_(torch.stack([low.to(total.dtype), high.to(total.dtype), total, norm]))
    row[4].copy_(t.bool().sum())
    if units and t.dim() >= 2 and t.shape[0] >= 2:
        row[5].copy_(torch.amax(t, dim=0).bool().sum())
    else:
        row[5].fill_(-1)
    return row


def activation_from_row(count: int, values: Sequence[float], batch: int = 0) -> Dict[str, Any]:
    """The snapshot's activation statistics from a row of :func:`activation_partials`."""
    low, high, total, norm, nonzero, alive = (float(v) for v in values[:ACTIVATION_WIDTH])
    nonzero = int(nonzero)
    dead = None
    if alive >= 0 and batch >= 2 and count:
        units = count // batch
        dead = {
            "units": units,
            "deadUnitCount": units - int(alive),
            "deadUnits": (units - int(alive)) / units if units else None,
        }
    finite = all(math.isfinite(v) for v in (low, high, total, norm))
    out: Dict[str, Any] = {
        "count": count,
        "mean": None,
        "std": None,
        "min": None,
        "max": None,
        "zeros": (count - nonzero) / count if count else None,
        "zeroCount": count - nonzero,
        "nan": None,
        "posinf": None,
        "neginf": None,
        "nonFinite": 0 if finite else None,
        "hasNonFinite": not finite,
        "units": None,
        "deadUnitCount": None,
        "deadUnits": None,
    }
    if dead is not None:
        out.update(dead)
    if not finite:
        return out
    mean = total / count
    std = None
    if count > 1:
        var = max(norm * norm - count * mean * mean, 0.0) / (count - 1)
        bound = (high - low) / 2.0 * math.sqrt(count / (count - 1))  # no spread can exceed the range
        std = min(math.sqrt(var), bound)
    out.update(mean=mean, std=std, min=low, max=high, nan=0, posinf=0, neginf=0)
    return out


def grad_partials(torch: Any, grads: List[Any], rows: "Rows") -> List[Any]:
    """``(sum|g|, ‖g‖, max|g|)`` of each gradient, written into ``rows`` (rows 0.. per device);
    the row of each gradient, in order."""
    try:
        ones = torch._foreach_norm(grads, 1)
        twos = torch._foreach_norm(grads, 2)
        tops = torch._foreach_norm(grads, math.inf)
    except Exception:  # old torch, or a dtype foreach does not take
        vn = torch.linalg.vector_norm
        ones = [vn(g, 1) for g in grads]
        twos = [vn(g, 2) for g in grads]
        tops = [vn(g, math.inf) for g in grads]
    by_device: Dict[Any, List[int]] = {}
    for i, g in enumerate(grads):
        by_device.setdefault(g.device, []).append(i)
    slots: List[Any] = [None] * len(grads)
    for device, indices in by_device.items():
        table = rows.table(device, len(indices))
        try:
            block = torch.stack(
                [
                    torch.stack([ones[i] for i in indices]),
                    torch.stack([twos[i] for i in indices]),
                    torch.stack([tops[i] for i in indices]),
                ],
                dim=1,
            )
        except Exception:  # gradients of several dtypes on one device
            block = torch.stack([torch.stack([ones[i], twos[i], tops[i]]).to(table.dtype) for i in indices])
        table[: len(indices)].copy_(block)
        for position, i in enumerate(indices):
            slots[i] = table[position]
    return slots


def grad_from_row(count: int, values: Sequence[float]) -> Dict[str, Any]:
    one, two, top = (float(v) for v in values[:GRAD_WIDTH])
    finite = all(math.isfinite(v) for v in (one, two, top))
    if not finite:
        return {
            "count": count,
            "meanAbs": None,
            "maxAbs": None,
            "norm": None,
            "nan": None,
            "inf": None,
            "nonFinite": None,
            "hasNonFinite": True,
        }
    return {
        "count": count,
        "meanAbs": one / count if count else None,
        "maxAbs": top,
        "norm": two,
        "nan": 0,
        "inf": 0,
        "nonFinite": 0,
        "hasNonFinite": False,
    }
