"""A worker that ended without a result, read back from what real processes wrote: faulthandler's
stacks (a crash, an asked-for dump), the user's frames first and Torch Doctor's left out, and the
stacks asked only of the worker's own watched processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from support.paths import PYBACKEND
from torchdoctor.data_checks import ended, watch

pytestmark = pytest.mark.skipif(os.name != "posix", reason="faulthandler's signals and /proc")

DECODE = """
import ctypes, json, sys, time
from torchdoctor.data_checks import watch

watch.install(sys.argv[1])


def on_object(obj):  # called by the json library for every object
    if sys.argv[2] == "crash":
        ctypes.string_at(0)
    print("ready", flush=True)
    time.sleep(60)


def read_labels(text):
    watch.note("train", "__getitem__", 12)
    return json.loads(text, object_hook=on_object)


read_labels('{"label": 1}')
"""


def start(tmp_path: Path, how: str) -> subprocess.Popen:
    script = tmp_path / "labels.py"
    script.write_text(textwrap.dedent(DECODE))
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND))
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), how], stdout=subprocess.PIPE, text=True, env=env
    )


def test_a_crash_is_read_from_its_stack_with_the_users_line_and_the_library_call_it_was_inside(tmp_path: Path):
    proc = start(tmp_path, "crash")
    assert proc.wait(timeout=60) == -signal.SIGSEGV
    result = ended.crashed("train", str(tmp_path / "labels.py"), proc.returncode, str(tmp_path), proc.pid)
    assert result is not None and result["error"]["index"] == 12 and result["error"]["stage"] == "__getitem__"
    headline, script = result["headline"], str(tmp_path / "labels.py")
    assert f"It crashed at {script}:" in headline and "in on_object (`ctypes.string_at(0)`)" in headline
    assert "inside ctypes/__init__.py:" in headline
    lines = result["error"]["detail"].splitlines()
    assert "your code first" in lines[0]
    assert [line.split(", in ")[-1] for line in lines[1:4]] == ["on_object", "read_labels", "<module>"]
    assert lines[4] == "inside (most recent call first):" and "ctypes" in lines[5]


def test_the_stacks_are_asked_only_of_the_workers_own_watched_processes(tmp_path: Path):
    proc = start(tmp_path, "wait")
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        (tmp_path / watch.WHERE.format(pid=os.getpid())).write_text("{}")  # not the worker's: never signalled
        frames: list = []
        for _ in range(50):  # "ready" is printed just before the sleep: ask until the stack is in it
            asked = ended.ask_for_stacks(str(tmp_path), proc.pid)
            assert list(asked) == [proc.pid]
            time.sleep(0.1)
            frames = ended.stuck_thread(ended.parse_stack(watch.read_stack(str(tmp_path), proc.pid)))
            if "time.sleep(60)" in ended.where_words(frames):
                break
        assert proc.poll() is None  # the dumps do not stop the process
    finally:
        proc.kill()
        proc.wait()
    assert [f.func for f in frames][:1] == ["on_object"] and "`time.sleep(60)`" in ended.where_words(frames)
    assert "inside" not in ended.where_words(frames)  # time.sleep is C: no library frame above it


def test_torch_doctors_frames_are_never_shown():
    ours = os.path.join(os.path.dirname(ended.__file__), "sampling.py")
    frames = [
        ended.StackFrame("/usr/lib/python3.11/threading.py", 320, "wait"),
        ended.StackFrame(__file__, 10, "__getitem__"),
        ended.StackFrame(ours, 126, "_get"),
    ]
    text = ended.stack_words(frames, "the data-check worker")
    assert "sampling.py" not in text and __file__ in text and "threading.py" in text
    assert text.endswith("(1 more frame, of Torch Doctor and the code that called yours, left out)")
