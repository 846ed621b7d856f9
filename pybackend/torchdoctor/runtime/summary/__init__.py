"""One-line summaries and expandable children of tensors, arrays, modules and containers, and
the lines of a training loop's other objects (optimizers, schedulers, data loaders: ``training``).

``api.py`` holds the public entry points (:func:`summarize`, :func:`stats`, re-exported here and
as ``torchdoctor.summarize`` / ``torchdoctor.stats``); ``kinds`` classifies a value, ``*_info``
describe one kind each, ``render`` writes the line, ``children`` lists what an expanded tensor shows.
May import: ``runtime.stats`` and the standard library (torch and numpy lazily, inside functions);
never ``server``, ``checks`` or ``lint``.
"""

from __future__ import annotations

from .api import stats, summarize, summarize_if_ours

__all__ = ["summarize", "stats", "summarize_if_ours"]
