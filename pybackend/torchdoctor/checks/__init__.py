"""Model checks (overfit one batch, LR finder, gradient check, shape trace), run in a worker process.

Two sides. Backend side, imported by the language server and the CLI, torch-free: ``discovery``
(with ``discovery_constructed``: imported models built at module level, the example's class)
and ``safe_discovery`` (finding ``nn.Module`` classes in the source, never raising),
``source_text`` (reading a file as Python does, within a size limit), ``user_files`` (the user's
code or a library's: also asked by ``data_checks``), ``jobs``, ``process_tree``
and ``worker_streams`` (starting, timing out and cancelling a worker, reading what it writes),
``result`` (the CheckResult payload), ``text_report`` and ``cli``. Worker side, run in the user's
interpreter by ``worker`` (``worker_guard``: die with the backend, stay within memory), torch
imported inside functions only: ``overfit`` (with ``overfit_measure`` and ``regularisation``),
``lr_finder``, ``gradcheck`` (with ``gradcheck_words`` and ``custom_functions``), ``shape_trace``,
``preconditions`` (what a check needs of the model) and ``example/`` (the model and batch a check
runs on).
May import: the standard library, ``torchdoctor.spelling``, ``torchdoctor.runtime`` (worker side
only) and torch inside functions; never ``server``, ``lint`` or ``diagnosis``; no torch at module level.
"""
