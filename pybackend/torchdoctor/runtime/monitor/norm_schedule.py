"""When to compute the gradient norm: every step while it is cheap against the step, else sampled.

The norm reads every gradient: one reduction per parameter tensor, about 3-5 us each on a CPU
whatever its size, plus the bytes. Against a GPU step (one fused kernel, launched without a
wait) or a big model's CPU step it is nothing; against a small model's CPU step it is not (a
4-layer GPT of width 128 has 52 tensors: ~0.3 ms, over 1% of its CPU step). So each optimizer's
norm is timed when computed, and computed every ``interval`` steps, the smallest interval that
keeps its average cost under ``BUDGET`` of the step time (both estimates smoothed), at most
``every``: always at an update-ratio step (the ``update_ratio_low`` verdict quotes the norm of
that step), and every step while the estimate says it is cheap. A norm that the script's
``clip_grad_norm_`` returned costs nothing and is always recorded (the recorder does not ask).
Pure Python.
"""

from __future__ import annotations

import math
from typing import Dict, List

BUDGET = 0.005  # the share of a step the norm may cost on average
SMOOTHING = 0.2  # weight of the newest time in each estimate


class NormSchedule:
    def __init__(self, every: int) -> None:
        self.every = max(1, int(every))
        self.state: Dict[int, List[float]] = {}  # optimizer id -> [norm seconds, step seconds, steps since the norm]

    def due(self, key: int, ratio_step: bool) -> bool:
        """Whether this optimizer's step should compute the norm."""
        state = self.state.get(key)
        if state is None or ratio_step:
            return True
        return state[2] + 1 >= self.interval(key)

    def interval(self, key: int) -> int:
        state = self.state.get(key)
        if state is None or state[1] <= 0.0:
            return 1
        return max(1, min(self.every, math.ceil(state[0] / (BUDGET * state[1]))))

    def computed(self, key: int, seconds: float) -> None:
        state = self.state.setdefault(key, [seconds, 0.0, 0.0])
        state[0] += SMOOTHING * (seconds - state[0])
        state[2] = 0.0

    def skipped(self, key: int) -> None:
        state = self.state.get(key)
        if state is not None:
            state[2] += 1

    def step_time(self, key: int, seconds: float) -> None:
        """The time since this optimizer's previous step (the recorder's step boundary)."""
        state = self.state.get(key)
        if state is not None and seconds > 0.0:
            state[1] = seconds if state[1] <= 0.0 else state[1] + SMOOTHING * (seconds - state[1])
