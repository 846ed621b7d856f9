"""Modules whose output range follows from their input's: no need to read their output.

An activation or a pooling layer cannot turn finite values into NaN, or small ones into large
ones. When its input is the tensor the watch has just checked (the previous module's output,
unchanged), the output's bounds are computed from the input's extremes instead of read again:

- elementwise functions monotone on each side of 0 (ReLU, ReLU6, LeakyReLU, Hardtanh, Tanh,
  Sigmoid): the output extremes are exactly those of ``f`` at min, max (and 0), so a dead ReLU
  (input max <= 0) is still seen;
- max/average pooling, flatten, identity: the output lies within the input's range.

This halves the reads of a conv/ReLU/pool network. Anything else (and any module whose input is
not the tensor just checked) is read as usual.
"""

from __future__ import annotations

import math
import sys
from typing import Callable, Dict, Optional, Tuple

Bounds = Callable[[float, float, object], Tuple[float, float]]

_TABLE: Optional[Dict[type, Bounds]] = None


def bounds_function(module_type: type) -> Optional[Bounds]:
    """``f(low, high, module) -> (low, high)`` for a module type, or None if it must be read."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build()
    return _TABLE.get(module_type)


def _monotone(f: Callable[[float, object], float]) -> Bounds:
    """Exact extremes of an f monotone on each side of 0 (a LeakyReLU with a negative slope too)."""

    def bounds(low: float, high: float, module: object) -> Tuple[float, float]:
        values = [f(low, module), f(high, module)] + ([f(0.0, module)] if low < 0.0 < high else [])
        return min(values), max(values)

    return bounds


def _within(low: float, high: float, module: object) -> Tuple[float, float]:
    return low, high


def _sigmoid(x: float, module: object) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _build() -> Dict[type, Bounds]:
    nn = sys.modules["torch"].nn
    table: Dict[type, Bounds] = {
        nn.ReLU: _monotone(lambda x, m: max(x, 0.0)),
        nn.ReLU6: _monotone(lambda x, m: min(max(x, 0.0), 6.0)),
        nn.LeakyReLU: _monotone(lambda x, m: x if x >= 0 else x * m.negative_slope),
        nn.Hardtanh: _monotone(lambda x, m: min(max(x, m.min_val), m.max_val)),
        nn.Tanh: _monotone(lambda x, m: math.tanh(x)),
        nn.Sigmoid: _monotone(_sigmoid),
    }
    for name in (
        "MaxPool1d",
        "MaxPool2d",
        "MaxPool3d",
        "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d",
        "AvgPool1d",
        "AvgPool2d",
        "AvgPool3d",
        "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d",
        "AdaptiveAvgPool3d",
        "Flatten",
        "Unflatten",
        "Identity",
    ):
        cls = getattr(nn, name, None)
        if cls is not None:
            table[cls] = _within
    return table
