"""The anomaly watch: pause or log at the first NaN, Inf or exploding value (docs/anomaly.md).

``startup`` arms it when the program imports torch, ``config`` reads ``TORCHDOCTOR_ANOMALY``,
``watch`` installs the hooks, ``detect``/``grads``/``stale``/``loss_health`` judge values,
``report``/``sentences``/``render``/``pause`` say what happened; ``conditions`` are the helpers that
anomaly breakpoints call (kept importable as ``torchdoctor.runtime.conditions``).
May import: ``runtime.summary``, ``runtime.startup``, ``torchdoctor.spelling`` and the standard
library (torch lazily; pydevd's modules only inside functions, when the program runs under the
debugger); never ``server``, ``checks``, ``lint`` or ``diagnosis``.
"""
