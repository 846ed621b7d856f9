"""Modules whose output range follows from their input's: no need to read their output.

An activation or a pooling layer cannot turn finite values into NaN, or small ones into large
ones. When its input is the tensor the watch has just checked (the previous module's output,
unchanged), the output's bounds are computed from the input's extremes instead of read again:

- elementwise functions monotone on each side of 0 (ReLU, ReLU6, LeakyReLU, Hardtanh, Tanh,
  Sigmoid): the output extremes are exactly those of ``f`` at min, max (and 0), so a dead ReLU
  (input max <= 0) is still seen;
- max/average pooling, flatten, identity: the output lies within the input's range;
- GELU (extremes of its two monotone pieces), Dropout (0 and the input's range scaled by
  ``1/(1-p)``).

When the input was checked by the one-pass bound (:func:`detect.quick_bound`: only a bound on
``|x|`` is known), the modules that can output all zeros from non-zero inputs (ReLU and kin,
max pooling) are read instead, so a dead unit is still seen.

This halves the reads of a conv/ReLU/pool network. Anything else (and any module whose input is
not the tensor just checked) is read as usual.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, Dict, Optional, Tuple

Bounds = Callable[[float, float, Any], Tuple[float, float]]

_TABLE: Optional[Dict[type, Bounds]] = None


def bounds_function(module_type: type) -> Optional[Bounds]:
    """``f(low, high, module) -> (low, high)`` for a module type, or None if it must be read."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build()
    return _TABLE.get(module_type)


def _monotone(f: Callable[[float, Any], float]) -> Bounds:
    """Exact extremes of an f monotone on each side of 0 (a LeakyReLU with a negative slope too)."""

    def bounds(low: float, high: float, module: Any) -> Tuple[float, float]:
        a, b = f(low, module), f(high, module)
        if low < 0.0 < high:
            c = f(0.0, module)
            return min(a, b, c), max(a, b, c)
        return min(a, b), max(a, b)

    return bounds


def _relu(low: float, high: float, module: Any) -> Tuple[float, float]:
    """``_monotone(max(x, 0))``, written out: the activation of most networks, on the hot path."""
    a, b = max(low, 0.0), max(high, 0.0)
    if low < 0.0 < high:
        return min(a, b, 0.0), max(a, b, 0.0)
    return min(a, b), max(a, b)


def _within(low: float, high: float, module: Any) -> Tuple[float, float]:
    return low, high


def _sigmoid(x: float, module: Any) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _gelu(low: float, high: float, module: Any) -> Tuple[float, float]:
    """GELU falls to its minimum at x = -0.7518, then rises: its extremes on [low, high]."""

    values = [_gelu_at(low), _gelu_at(high)] + ([GELU_MIN] if low < GELU_ARGMIN < high else [])
    return min(values), max(values)


def _gelu_at(x: float) -> float:
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


GELU_ARGMIN, GELU_MIN = -0.7517916, -0.1699712


def _dropout(low: float, high: float, module: Any) -> Tuple[float, float]:
    """Zeros some values and scales the rest by 1/(1-p) while training: within the scaled range and 0."""
    p = float(getattr(module, "p", 0.0))
    if not getattr(module, "training", False) or p <= 0.0:
        return low, high
    if p >= 1.0:
        return 0.0, 0.0  # drops everything: a dead output, which the dead rule judges
    scale = 1.0 / (1.0 - p)
    return min(low, 0.0) * scale, max(high, 0.0) * scale


# These can output all zeros from an input that is not: their bounds need the input's exact
# extremes (the one-pass check knows only a bound on |x|), or the dead-ReLU rule would miss.
NEEDS_EXACT = ("ReLU", "ReLU6", "LeakyReLU", "Hardtanh", "MaxPool1d", "MaxPool2d", "MaxPool3d")


def needs_exact(module_type: type) -> bool:
    return module_type.__name__ in NEEDS_EXACT


def _build() -> Dict[type, Bounds]:
    nn = sys.modules["torch"].nn
    table: Dict[type, Bounds] = {
        nn.GELU: _gelu,
        nn.Dropout: _dropout,
        nn.ReLU: _relu,
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
