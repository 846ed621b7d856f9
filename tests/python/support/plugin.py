"""The debugpy plugin (``pybackend/pydevd_plugins/extensions/pydevd_plugin_torchdoctor.py``)
loaded on its own, as pydevd loads it, for unit tests of its parts."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import pytest

from support.paths import PYBACKEND


def load_plugin(monkeypatch: Any, name: str) -> Any:
    """A fresh copy of the plugin module, imported as ``name``; skips without debugpy."""
    debugpy = pytest.importorskip("debugpy")
    # The plugin imports pydevd's extension API, which lives in debugpy's vendored pydevd.
    monkeypatch.setattr(
        sys, "path", [os.path.join(os.path.dirname(debugpy.__file__), "_vendored", "pydevd")] + sys.path
    )
    path = PYBACKEND / "pydevd_plugins" / "extensions" / "pydevd_plugin_torchdoctor.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
