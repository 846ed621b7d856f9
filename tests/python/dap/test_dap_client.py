"""The DAP client itself, on a program without torch: entry stop, stepping, exception stop."""

from __future__ import annotations

import os
import textwrap

import pytest

from support.dap_client import DAPClient, DAPError

pytestmark = pytest.mark.timeout(600)  # a ceiling for a loaded machine, not an expectation


def test_stepping_and_exception_stops(tmp_path):
    program = tmp_path / "boom.py"
    program.write_text(
        textwrap.dedent("""\
        x = 1
        y = x + 1
        print("about to fail")
        raise ValueError("boom")
    """)
    )
    with DAPClient() as dap:
        dap.launch(str(program), exception_filters=["uncaught"], stopOnEntry=True)
        stop = dap.wait_stopped()
        assert (stop.reason, stop.frames[0]["line"]) == ("entry", 1)
        stop = dap.stopped_after(lambda: dap.next_(stop.thread_id))
        assert (stop.reason, stop.frames[0]["line"]) == ("step", 2)
        assert dap.evaluate("x", stop.frame_id, "watch")["result"] == "1"
        with pytest.raises(DAPError):
            dap.evaluate("undefined_name", stop.frame_id, "watch")
        stop = dap.stopped_after(lambda: dap.continue_(stop.thread_id))
        assert stop.reason == "exception"
        assert dap.exception_info(stop.thread_id)["exceptionId"] == "ValueError"
        assert "about to fail" in dap.output_text()


def test_an_adapter_that_cannot_start_fails_at_once_and_says_why(tmp_path):
    """An interpreter without a working debugpy: the first request fails within seconds with the
    interpreter's own words, not after the client's four-minute ceiling."""
    import time

    stand_in = tmp_path / "debugpy"  # shadows the real package: importing it fails as a missing one would
    stand_in.mkdir()
    (stand_in / "__init__.py").write_text(
        'raise ImportError("No module named debugpy (a stand-in for a missing one)")\n'
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    start = time.monotonic()
    with DAPClient(adapter_env=env) as dap:
        with pytest.raises(RuntimeError) as failed:
            dap.initialize()
    assert time.monotonic() - start < 60  # a ceiling for a loaded box; the wait it replaces was 240 s
    message = str(failed.value)
    assert "debugpy.adapter" in message and "exited with status 1" in message
    assert "No module named debugpy" in message
