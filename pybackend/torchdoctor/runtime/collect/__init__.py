"""What the gradient-flow and shape-trace views are built from, collected inside the debuggee.

``install`` puts the forward and gradient hooks in place (``trace``, ``grads``), within a time
``budget``; ``reduce``/``stats``/``tensors`` fold tensors to a few numbers; ``parameters``,
``counts`` and ``locations`` describe the model (values and gradients, parameter counts, where each
module is defined); ``shape_errors`` says why a forward raised (also used by the shape-trace
check); ``snapshot`` writes one JSON snapshot for the backend (kept importable as
``torchdoctor.runtime.snapshot``).
May import: ``runtime.stats``, ``runtime.summary`` (``module_info``) and the standard library (torch
lazily); never ``server``, ``checks``, ``lint`` or ``diagnosis``.
"""
