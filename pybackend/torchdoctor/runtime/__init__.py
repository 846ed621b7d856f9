"""What runs inside the user's program under the debugger: summaries, hooks, anomaly watch.

Stdlib only at import time; torch and numpy are imported lazily, and only when the program has
already imported them. Public API (lazy): :func:`summarize`, :func:`stats`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["summarize", "stats"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import summary

        return getattr(summary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
