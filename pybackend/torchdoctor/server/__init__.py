"""The Torch Doctor language server (pygls), started by the extension over stdio.

It never imports torch: it runs on any Python >= 3.9 with the bundled pure-Python
libraries, and hands anything that needs torch to a worker process.
May import: the bundled libraries (pygls, lsprotocol), ``torchdoctor.lint``, ``torchdoctor.diagnosis``,
the backend side of ``torchdoctor.checks`` and ``torchdoctor.spelling``; never torch, never
``torchdoctor.runtime`` (tests/python/unit/test_import_rules.py).
"""
