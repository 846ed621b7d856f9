"""Exact tensor statistics shared by the summaries and the views' collection.

``tensor_stats`` (fused device-side reductions), ``blocks`` (walking a tensor in bounded blocks),
``moments`` (combining partial moments), ``cache`` (by tensor identity and version),
``fingerprint`` and ``array_fingerprint`` (what makes a cached tensor's or numpy array's entry
stale), ``budget`` (the time one debugger request may spend, and what a statistic will cost)
and ``finite_check`` (many small tensors proven free of NaN/Inf by one batched norm).
May import: the standard library (torch and numpy lazily); nothing else of torchdoctor.
"""
