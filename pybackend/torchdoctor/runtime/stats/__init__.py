"""Exact tensor statistics shared by the summaries and the views' collection.

``tensor_stats`` (fused device-side reductions), ``blocks`` (walking a tensor in bounded blocks),
``moments`` (combining partial moments), ``cache`` (by tensor identity and version) and
``fingerprint`` (what makes a cached entry stale). May import: the standard library (torch
lazily); nothing else of torchdoctor.
"""
