"""TensorBoard event files read back; TORCHDOCTOR_MONITOR arms the monitor in a fresh
interpreter and streams to a loopback listener with the token."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from support.paths import PYBACKEND, SAMPLES

SCRIPT = SAMPLES / "monitor" / "gan.py"


def test_tensorboard_event_files_read_back(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    board = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "run", "--tensorboard", str(board), str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=240,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    events = EventAccumulator(str(board), size_guidance={"scalars": 0, "histograms": 0})
    events.Reload()
    tags = events.Tags()
    assert {"opt0/loss", "opt1/loss", "opt0/lr/0", "opt0/grad_norm", "opt0/time/backward", "rss"} <= set(
        tags["scalars"]
    )
    losses = events.Scalars("opt1/loss")
    assert [e.step for e in losses] == list(range(1, 101))
    histograms = [t for t in tags["histograms"] if t.startswith(("weights/", "grads/"))]
    # opt0 is the discriminator, the second model the script calls (the generator makes the fakes)
    assert "weights/model1.0.weight" in histograms and "grads/model1.0.weight" in histograms, histograms
    assert len(events.Histograms("weights/model1.0.weight")) == 10  # every 10 steps of opt0


def test_tensorboard_missing_says_how_to_install(tmp_path):
    from torchdoctor.runtime.monitor import board

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "tensorboard").mkdir()
    (blocked / "tensorboard" / "__init__.py").write_text("raise ImportError('no tensorboard here')\n")
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import torch\n"
        "from torchdoctor.runtime.monitor import board, recorder, config\n"
        "m = recorder.install(config.MonitorConfig())\n"
        "writer, problem = board.open_writer('runs/x', m)\n"
        "print(writer is None, problem)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(blocked)], capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("True ") and "pip install tensorboard" in done.stdout, done.stderr[-2000:]
    assert board.MISSING.format(folder="x").startswith("TensorBoard export needs")


def test_env_arms_the_monitor_and_streams_to_the_view(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    lines = []

    def accept():
        conn, _ = listener.accept()
        data = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        lines.extend(json.loads(x) for x in data.decode().splitlines())

    reader = threading.Thread(target=accept, daemon=True)
    reader.start()
    token = "0123456789abcdef" * 2
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        PYTHONPATH=str(PYBACKEND),
        TORCHDOCTOR_MONITOR=json.dumps({"every": 10, "channel": {"host": "127.0.0.1", "port": port, "token": token}}),
    )
    launcher = "import runpy, sys; from torchdoctor.runtime import startup; startup.activate(); runpy.run_path(sys.argv[1], run_name='__main__')"
    done = subprocess.run(
        [sys.executable, "-c", launcher, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    reader.join(30)
    listener.close()
    assert lines[0]["hello"]["token"] == token and lines[0]["hello"]["script"] == str(SCRIPT)
    steps = [s for line in lines if "batch" in line for s in line["batch"]["steps"]]
    assert {s["series"] for s in steps} == {"opt0", "opt1"} and len(steps) == 200
    assert lines[-1] == {"end": {"steps": 200, "dropped": 0}}
