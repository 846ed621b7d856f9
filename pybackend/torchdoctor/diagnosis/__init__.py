"""Diagnosis of runtime snapshots: seed 002's rules, and the view models the webviews draw.

Runs in the backend (the language server): pure Python, never imports torch. Input: the JSON
object ``torchdoctor.runtime.snapshot.dump()`` wrote in the paused program (schema in
``runtime/collect/snapshot.py``). Output: :func:`diagnose` -> ``{"gradientFlow": ..., "shapeTrace": ...}``.

- :mod:`rules`: each rule of seed 002 (dead units, vanishing/exploding gradients, first/last
  gradient ratio, collapsed/exploding activations, NaN/Inf) with its threshold in
  :class:`rules.Thresholds`, a sentence naming the layer and the decision tree's next step;
- :mod:`gradient_flow` and :mod:`shape_trace`: the two view models;
- :mod:`diagnose`: one snapshot in, both view models out (what ``torchDoctor/diagnoseSnapshot`` answers);
- :mod:`presentation`: verdict order, counts, folded flags and summary sentences, so the extension
  only draws; :mod:`blocks`: a model's repeated blocks (``h.0`` ... ``h.11``) folded as groups;
- :mod:`snapshot_data`: reading a snapshot defensively (it comes from the user's process);
- :mod:`words`: numbers and shapes as the sentences write them (through ``torchdoctor.spelling``).

May import: the standard library and ``torchdoctor.spelling``; never torch or numpy (not even inside
functions), never ``runtime``, ``server``, ``checks`` or ``lint``.
"""

from __future__ import annotations

from .diagnose import diagnose
from .rules import Thresholds

__all__ = ["diagnose", "Thresholds"]
