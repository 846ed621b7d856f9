"""Torch Doctor: find the PyTorch training bugs that never crash.

The package has five parts, each with one job, and two shared modules:

- ``torchdoctor.server``: the pygls language server the VS Code extension talks to
  (never imports torch or the runtime);
- ``torchdoctor.lint``: static analysis of training code (never imports torch);
- ``torchdoctor.diagnosis``: runtime snapshots turned into the views' verdicts (never imports torch);
- ``torchdoctor.checks``: model checks run in worker subprocesses;
- ``torchdoctor.runtime``: what runs inside the user's program under the debugger (imports nothing
  from server, checks, lint or diagnosis);
- ``torchdoctor.spelling``: how numbers, sizes, shapes and dtypes are written (stdlib only);
- ``torchdoctor.background``: work on a large document in a child process, so the language server
  keeps answering (stdlib only; used by ``server`` and ``lint``).

``cli.py`` (with ``doctor.py`` and ``anomaly_cli.py``) is the ``torchdoctor`` command. Each
package's docstring says what it may import; tests/python/unit/test_import_rules.py checks it.
"""

__version__ = "0.1.0"


def __getattr__(name):
    # Lazy, so ``import torchdoctor`` stays instant and torch-free (the backend never needs the
    # runtime, and the debuggee imports it only when the debugger first shows a tensor).
    if name in ("summarize", "stats"):
        from .runtime.summary import api

        return getattr(api, name)
    if name == "log":  # torchdoctor.log(name, value): a series of your own in the training monitor
        from .runtime.monitor import api as monitor_api

        return monitor_api.log
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
