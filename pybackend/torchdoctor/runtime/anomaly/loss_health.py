"""Loss health: the rules of seed 002's ``check_loss_health``, made quiet on healthy noise.

Pure Python (floats in, findings out) so every rule is unit-tested without torch. Each call to
:meth:`LossHealth.observe` takes the loss of one step and returns the rules it breaks:

- ``nan``: the loss is NaN or Inf.
- ``spike``: the loss exceeds ``spike_factor`` times the median of the last ``SPIKE_WINDOW``
  finite losses (once at least ``SPIKE_MIN_HISTORY`` are known, and only while that median is
  positive: a ratio to a negative or zero level means nothing).
- ``notDecreasing`` (seed 002): after ``2 * WINDOW`` steps, the mean of the last ``WINDOW`` losses
  is still >= 99% of the mean of the first ``WINDOW``.
- ``oscillating``: over the last ``WINDOW`` losses the step-to-step swing is large against the
  loss itself (mean |diff| > ``OSCILLATION_SWING`` x median) and goes nowhere (net change below
  ``OSCILLATION_PROGRESS`` of the distance travelled). Seed 002's own test (spread of the diffs
  > 2 x |mean diff|) fires on the ordinary noise of almost every mini-batch loss curve, so it is
  not used as is.

Trend rules (``notDecreasing``, ``oscillating``) describe a state, not an event: each is reported
once, the first time it holds. Non-finite losses are not added to the history.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional

WINDOW = 10
SPIKE_WINDOW = 20
SPIKE_MIN_HISTORY = 5
NOT_DECREASING_RATIO = 0.99
OSCILLATION_SWING = 0.5
OSCILLATION_PROGRESS = 0.25

Finding = Dict[str, object]


class LossHealth:
    def __init__(self, spike_factor: float = 10.0) -> None:
        self.spike_factor = spike_factor
        self.history: List[float] = []  # finite losses, in step order
        self._latched = set()  # trend rules already reported

    def observe(self, value: float) -> List[Finding]:
        """Check ``value`` against the history, then add it; returns the rules it breaks."""
        if not math.isfinite(value):
            return [{"rule": "nan", "value": value}]
        findings = [f for f in (self._spike(value),) if f]
        self.history.append(value)
        for rule in (self._not_decreasing, self._oscillating):
            finding = rule()
            if finding and finding["rule"] not in self._latched:
                self._latched.add(finding["rule"])
                findings.append(finding)
        return findings

    def _spike(self, value: float) -> Optional[Finding]:
        recent = self.history[-SPIKE_WINDOW:]
        if len(recent) < SPIKE_MIN_HISTORY:
            return None
        median = _median(recent)
        if median > 0 and value > self.spike_factor * median:
            return {"rule": "spike", "value": value, "median": median, "ratio": value / median,
                    "factor": self.spike_factor, "window": len(recent)}
        return None

    def _not_decreasing(self) -> Optional[Finding]:
        if len(self.history) < 2 * WINDOW:
            return None
        first = sum(self.history[:WINDOW]) / WINDOW
        last = sum(self.history[-WINDOW:]) / WINDOW
        # "99% of first" for positive losses; the same margin below it for negative ones.
        if last >= first - (1 - NOT_DECREASING_RATIO) * abs(first):
            return {"rule": "notDecreasing", "first_mean": first, "last_mean": last, "window": WINDOW,
                    "steps": len(self.history)}
        return None

    def _oscillating(self) -> Optional[Finding]:
        recent = self.history[-WINDOW:]
        if len(recent) < WINDOW:
            return None
        travelled = sum(abs(b - a) for a, b in zip(recent, recent[1:]))
        net = abs(recent[-1] - recent[0])
        if net >= OSCILLATION_PROGRESS * travelled:
            return None  # it went somewhere (the usual case): no need for the median
        swing = travelled / (len(recent) - 1)
        level = _median([abs(v) for v in recent])
        if level > 0 and swing > OSCILLATION_SWING * level:
            return {"rule": "oscillating", "swing": swing, "level": level, "net": net, "window": WINDOW}
        return None


def _median(values: List[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
