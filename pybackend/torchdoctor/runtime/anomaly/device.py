"""Checks that wait on the device: one host transfer per step instead of one per module.

On an accelerator, reading a module output's extremes on the host (``.item()``) would stall the
host until the device catches up, once per module call: training would crawl. Instead each
check leaves its ``[min, max]`` (or the loss value) on the device, in call order, and
:meth:`DeviceBatch.flush` concatenates them per device and brings them over in one ``tolist()``
(the one synchronisation of the step, taken after ``backward``). The watch then reads them in
order: the first bad forward row names the module that went bad first, exactly as on the CPU,
only later (the stop comes at the step's ``loss.backward()`` line, and the inputs of that module
are no longer there to be summarised).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Tuple

# Programs that never call backward (inference) flush when this many checks are waiting.
MAX_PENDING = 1024


class DeviceBatch:
    def __init__(self) -> None:
        self.parts: List[Tuple[Any, Any]] = []  # (tag, 1-d float32 tensor on some device)
        self.kept_values = 0  # values of the outputs its tags keep whole (masks.mask_candidate)

    def add(self, tag: Any, values: Any) -> None:
        self.parts.append((tag, values))

    def __len__(self) -> int:
        return len(self.parts)

    def flush(self) -> List[Tuple[Any, List[float]]]:
        """Every ``(tag, values)`` with values on the host, in the order added; then empty."""
        parts, self.parts = self.parts, []
        if not parts:
            return []
        torch = sys.modules["torch"]
        by_device: Dict[Any, List[int]] = {}
        for i, (_, values) in enumerate(parts):
            by_device.setdefault(values.device, []).append(i)
        host: List[List[float]] = [[] for _ in parts]
        for indices in by_device.values():
            flat = torch.cat([parts[i][1] for i in indices]).tolist()  # the one sync per device
            at = 0
            for i in indices:
                size = parts[i][1].numel()
                host[i] = flat[at : at + size]
                at += size
        return [(tag, host[i]) for i, (tag, _) in enumerate(parts)]
