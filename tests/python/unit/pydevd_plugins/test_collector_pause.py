"""The plugin's garbage-collector pause (``_CollectorPause``): nested, put back as it was, and
recovering from a pause an injected exception ended before its exit ran."""

from __future__ import annotations

import gc
import importlib.util
import os
import sys

import pytest

from support.paths import PYBACKEND


@pytest.fixture
def pause(monkeypatch):
    debugpy = pytest.importorskip("debugpy")
    # The plugin imports pydevd's extension API, which lives in debugpy's vendored pydevd.
    monkeypatch.setattr(
        sys, "path", [os.path.join(os.path.dirname(debugpy.__file__), "_vendored", "pydevd")] + sys.path
    )
    path = PYBACKEND / "pydevd_plugins" / "extensions" / "pydevd_plugin_torchdoctor.py"
    spec = importlib.util.spec_from_file_location("td_plugin_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    was = gc.isenabled()
    yield module._CollectorPause()
    (gc.enable if was else gc.disable)()


def test_nested_pauses_turn_the_collector_back_on_once(pause) -> None:
    gc.enable()
    with pause:
        with pause:
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_program_that_disabled_the_collector_keeps_it_disabled(pause) -> None:
    gc.disable()
    with pause:
        pass
    assert not gc.isenabled()


def test_a_pause_interrupted_before_its_exit_is_undone_by_the_next(pause) -> None:
    gc.enable()
    pause.__enter__()  # an exception injected here leaves no matching __exit__ ...
    pause.depth = 0  # ... and, at worst, the depth not counted yet
    with pause:
        assert not gc.isenabled()
    assert gc.isenabled()
