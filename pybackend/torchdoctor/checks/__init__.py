"""Model checks (overfit one batch, LR finder, gradient check, shape trace), run in a worker process.

Two sides. Backend side, imported by the language server and the CLI, torch-free: ``discovery``
(finding ``nn.Module`` classes in the source), ``jobs`` (starting, timing out and cancelling a
worker), ``result`` (the CheckResult payload), ``text_report`` and ``cli``. Worker side, run in the
user's interpreter by ``worker``, torch imported inside functions only: ``overfit``, ``lr_finder``,
``gradcheck``, ``shape_trace``, ``preconditions`` (what a check needs of the model) and
``example/`` (the model and batch a check runs on).
May import: the standard library, ``torchdoctor.spelling``, ``torchdoctor.runtime`` (worker side
only) and torch inside functions; never ``server``, ``lint`` or ``diagnosis``; no torch at module level.
"""
