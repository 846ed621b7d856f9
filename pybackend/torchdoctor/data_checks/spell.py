"""Numbers in the data checks' sentences."""

from __future__ import annotations

from typing import Any


def nums(values: Any, digits: int = 3) -> str:
    """``[0.485, 0.456, 0.406]`` for an array or list; ``-`` for None."""
    if values is None:
        return "-"
    try:
        items = [float(v) for v in values]
    except TypeError:
        return f"{float(values):.{digits}g}"
    return "[" + ", ".join(f"{v:.{digits}g}" for v in items) + "]"
