"""Kept for pydevd plugins and launch files that name the old module: see ``runtime/startup.py``."""

from .startup import activate, forget, problems, reset, when_torch_imported  # noqa: F401
