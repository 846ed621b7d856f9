"""Torch Doctor: find the PyTorch training bugs that never crash.

The package has four parts, each with one job:

- ``torchdoctor.server``: the pygls language server the VS Code extension talks to
  (never imports torch);
- ``torchdoctor.lint``: static analysis of training code;
- ``torchdoctor.checks``: model checks run in worker subprocesses;
- ``torchdoctor.runtime``: what runs inside the user's program under the debugger.
"""

__version__ = "0.1.0"


def __getattr__(name):
    # Lazy, so ``import torchdoctor`` stays instant and torch-free (the backend never needs the
    # runtime, and the debuggee imports it only when the debugger first shows a tensor).
    if name in ("summarize", "stats"):
        from .runtime import summary

        return getattr(summary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
