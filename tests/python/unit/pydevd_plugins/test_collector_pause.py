"""The plugin's garbage-collector pause (``_CollectorPause``): nested, put back as it was, and
recovering from a pause an injected exception ended before its exit ran."""

from __future__ import annotations

import gc

import pytest

from support.plugin import load_plugin


@pytest.fixture
def pause(monkeypatch):
    module = load_plugin(monkeypatch, "td_plugin_under_test")
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
