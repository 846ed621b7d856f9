"""What the gradient-flow and shape-trace views are built from, collected inside the debuggee.

``install`` puts the forward and gradient hooks in place (``trace``, ``grads``), within a time
``budget``; ``reduce``/``stats`` fold tensors to a few numbers; ``snapshot`` writes one JSON
snapshot for the backend (kept importable as ``torchdoctor.runtime.snapshot``).
May import: ``runtime.stats`` and the standard library (torch lazily); never ``server``,
``checks`` or ``lint``.
"""
