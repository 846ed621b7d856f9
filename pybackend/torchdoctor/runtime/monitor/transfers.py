"""``model_on_cpu`` and ``cpu_batches``: seed 000's wrong device that "runs slow". Pure Python.

Fed the facts of :class:`devices.DeviceWatch` (one dict a step) and the step's time split.

``cpu_batches`` is conservative, like ``input_bound``: the ordinary loop
``for x, y in loader: x = x.to(device)`` copies from pageable memory every step, and that is
fine while the copy is cheap. A step *shows it* when the model is on an accelerator, the batch
the DataLoader yielded is on the CPU and not pinned, the model's input is on the model's device
(so the copy happened between the yield and the forward), and

- the time from the yield to the forward is at least ``cpuBatchFraction`` of the step, and
- the batch's bytes alone, copied at ``FAST_COPY`` (faster than any pageable host-to-device copy
  we know of), would take at least ``cpuBatchCopyShare`` of the step.

The second condition keeps a cheap copy silent whatever the measured time holds: a blocking
copy waits for the GPU work still queued (a loop that never syncs pays its GPU time there), and
CPU work the loop does on the batch before the model falls in the same interval. The verdict
needs three quarters of a window of 20 steps (at least 10) to show it, and the window's sum.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Deque, Dict, Optional, Tuple

FAST_COPY = 25e9  # bytes per second: above pageable host-to-device copies (PCIe 4/5: ~6-20 GB/s)
WINDOW = 20
MIN_STEPS = WINDOW // 2

Row = Tuple[int, bool, float, float, int, Optional[bool]]  # step, shows, gap, total, bytes, busy


def shows(copy: Dict[str, Any], total: float, fraction: float, copy_share: float) -> bool:
    """This step's batch was copied from pageable CPU memory, and that took a large share."""
    if total <= 0 or copy.get("batch") != "cpu" or copy.get("pinned"):
        return False
    if copy.get("input") != copy.get("model"):
        return False  # the input reached the model elsewhere (a copy inside forward): not seen
    floor = float(copy.get("bytes") or 0) / FAST_COPY
    return float(copy.get("gap") or 0.0) >= fraction * total and floor >= copy_share * total


class CpuBatches:
    def __init__(self, fraction: float, copy_share: float) -> None:
        self.fraction, self.copy_share = fraction, copy_share
        self.rows: Dict[str, Deque[Row]] = {}

    def observe(self, series: str, step: int, copy: Dict[str, Any], total: float) -> Optional[Dict[str, Any]]:
        """The evidence of a verdict at this step, or None."""
        rows = self.rows.setdefault(series, deque(maxlen=WINDOW))
        hit = shows(copy, total, self.fraction, self.copy_share)
        rows.append((step, hit, float(copy.get("gap") or 0.0), total, int(copy.get("bytes") or 0), copy.get("busy")))
        if len(rows) < MIN_STEPS or step % 5:
            return None
        shown = [r for r in rows if r[1]]
        if 4 * len(shown) < 3 * len(rows):
            return None
        gap, spent = sum(r[2] for r in shown), sum(r[3] for r in shown)
        if spent <= 0 or gap / spent < self.fraction:
            return None
        busy = [r[5] for r in shown if r[5] is not None]
        return {
            "range": [rows[0][0], rows[-1][0]],
            "steps": len(rows),
            "shown": len(shown),
            "share": gap / spent,
            "gap_s": gap / len(shown),
            "step_s": spent / len(shown),
            "bytes": sum(r[4] for r in shown) / len(shown),
            "busy": sum(1 for b in busy if b) if busy else None,  # steps the GPU still had queued work
            "device": copy.get("model"),
        }


def model_on_cpu(facts: Optional[Dict[str, Any]]) -> bool:
    """Every parameter on the CPU, an accelerator available, nothing ever allocated on it."""
    if not facts or not facts.get("accelerator") or facts.get("used"):
        return False
    params = int(facts.get("params") or 0)
    return params > 0 and int(facts.get("cpu_params") or 0) == params
