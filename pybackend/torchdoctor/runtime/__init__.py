"""What runs inside the user's program under the debugger: summaries, hooks, anomaly watch.

Stdlib only at import time; torch and numpy are imported lazily, and only when the program has
already imported them. Public API (lazy): :func:`summarize` (and ``torchdoctor.summarize`` /
``torchdoctor.stats``).

One subpackage per feature: ``summary/`` (the one-line summaries and the Variables children),
``stats/`` (exact statistics, shared by summary and collect), ``anomaly/`` (the anomaly watch and
the anomaly-breakpoint conditions), ``collect/`` (what the gradient-flow and shape-trace views are
built from); ``startup.py`` turns them on when the program imports torch. The modules left at
this level (``conditions``, ``snapshot``, ``activation``, ``children``, ``kinds``) are one-line
re-exports kept for names that saved breakpoints, the extension and the pydevd plugin use.

May import: the standard library, ``torchdoctor.spelling``, torch and numpy (lazily); never
``torchdoctor.server``, ``torchdoctor.checks``, ``torchdoctor.lint`` or ``torchdoctor.diagnosis``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["summarize"]


def __getattr__(name: str) -> Any:
    # ``torchdoctor.runtime.stats`` is the statistics subpackage; the stats() function is
    # ``torchdoctor.stats`` (and ``torchdoctor.runtime.summary.api.api.stats``).
    if name in __all__:
        from .summary import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
