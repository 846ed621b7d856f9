"""The Torch Doctor language server (pygls), started by the extension over stdio.

It never imports torch: it runs on any Python >= 3.9 with the bundled pure-Python
libraries, and hands anything that needs torch to a worker process.

``app`` builds the server and registers one module per feature: ``lint_feature`` (squiggles,
quick fixes, hovers), ``checks_feature`` (CodeLenses and model checks, with ``model_index``),
``diagnosis_feature`` (``torchDoctor/diagnoseSnapshot``). Shared: ``protocol`` (every custom
method and payload, mirrored by extension/src/protocol.ts), ``params``, ``settings``,
``documents`` (the text a feature analyses), ``log_bridge``.
May import: the bundled libraries (pygls, lsprotocol), ``torchdoctor.lint``, ``torchdoctor.diagnosis``,
the backend side of ``torchdoctor.checks``, ``torchdoctor.spelling`` and ``torchdoctor.background``; never torch, never
``torchdoctor.runtime`` (tests/python/unit/test_import_rules.py).
"""
