"""A Dataset's drawn samples copied into one chunk array, made once per split and reused (reduce.py).

A DataLoader's batch arrives stacked; a Dataset's samples arrive one tensor each, handed over a row
at a time (``sampling.ROW``). Stacked into a new array once ``CHUNK`` samples were held, each chunk
took fresh memory (2 MB for 170 CIFAR images: page faults until the allocator keeps such blocks) and
kept every drawn tensor alive until then. Here each row is copied at once into the same chunk array:
the row's tensors are freed while still in cache, and the chunk stays warm for the statistics read
right after. The stacking of 2,000 CIFAR images (bench_data_checks.py): 2.6 ms of CPU time, 5.2 before.

Only a row of CPU tensors of the chunk's exact shape and dtype is copied here (``put`` says False
for any other, nothing taken): the reducer's own stacking handles the rest as before, so the values
reduced are the same either way. The array handed out by ``take`` is overwritten by the next chunk:
the reducer reads it at once and keeps copies only (the gallery's images), never views.
"""

from __future__ import annotations

import sys
from operator import attrgetter
from typing import Any, Optional

from .arrays import to_array

_DTYPE = attrgetter("dtype")


class Chunk:
    """Up to ``rows`` samples of one shape and dtype, in drawing order."""

    def __init__(self, torch: Any, rows: int, first: Any) -> None:
        self.torch = torch
        self.buffer, self.rows = torch.empty((rows, *first.shape), dtype=first.dtype), rows
        self.shape, self.dtype, self.device = first.shape, first.dtype, self.buffer.device
        self.indices: list = []

    @property
    def room(self) -> int:
        return self.rows - len(self.indices)  # not len(buffer): a tensor's __len__ is Python, ~1 us

    def put(self, indices: list, xs: list) -> bool:
        """Copy ``xs`` (at most ``room``) after the samples held; False, nothing taken, unless they are
        tensors of the chunk's shape, dtype and device. torch.stack checks that the samples share one
        shape and one device, but resizes an output of another shape and casts another dtype silently:
        the first sample's shape and device, and the set of dtypes met, are asked here (asking each
        sample's shape and device too cost ~20 us a row of 64, ~0.6 ms of a 2,000-image check)."""
        if not xs:
            return False
        first = xs[0]
        if type(first) is not self.torch.Tensor or first.shape != self.shape or first.device != self.device:
            return False
        if set(map(_DTYPE, xs)) != {self.dtype}:
            return False
        at = len(self.indices)
        try:
            with self.torch.no_grad():
                self.torch.stack(xs, out=self.buffer[at : at + len(xs)])
        except (RuntimeError, TypeError, ValueError):
            return False
        self.indices += indices
        return True

    def take(self) -> tuple:
        """(indices, the held samples as one array) - a view, valid until the next ``put`` - and empty."""
        idx, self.indices = self.indices, []
        return idx, to_array(self.buffer[: len(idx)])


def chunk_for(x: Any, shape: tuple, rows: int) -> Optional[Chunk]:
    """A chunk for samples like ``x`` when it is a plain CPU tensor of ``shape``, else None."""
    torch = sys.modules.get("torch")
    if torch is None or type(x) is not torch.Tensor or x.device.type != "cpu" or tuple(x.shape) != shape:
        return None
    if x.dtype.is_complex or rows < 2:
        return None
    return Chunk(torch, rows, x)
