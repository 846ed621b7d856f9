"""Make ``stats()`` output valid JSON: no NaN/Inf floats, no complex numbers, no tuples."""

from __future__ import annotations

import math
from typing import Any

from ...spelling import fmt_num, fmt_scalar


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else fmt_num(value)  # "NaN", "+Inf", "-Inf"
    if isinstance(value, complex):
        return fmt_scalar(value)
    return str(value)
