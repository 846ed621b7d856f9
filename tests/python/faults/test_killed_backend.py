"""A backend killed with SIGKILL mid-check takes its worker (and what the worker started) with it.

The backend is the real server, driven over stdio with hand-written JSON-RPC (pytest-lsp would
fail its teardown on a dead server); it runs under the suite's memory limit. The model hangs in
its forward after writing its pid and the pid of a child it started: in a Python loop (the
worker's watchdog thread can run) or in one C call that holds the GIL (``sum`` over a huge range:
no thread and no Python signal handler of the worker runs until it returns, so only a separate
process or the kernel can end it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from support.faults import server_command

HANGS = """
import os, subprocess, sys, time
import torch.nn as nn

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])


class Hangs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        open({pids!r}, "w").write("%d %d" % (os.getpid(), child.pid))
{forward}
"""

FORWARDS = {
    "python loop": "        while True:\n            time.sleep(0.05)",
    "GIL held in C": "        return sum(range(10**15))",
}


def _send(proc: subprocess.Popen, message: dict) -> None:
    body = json.dumps(dict(message, jsonrpc="2.0")).encode()
    assert proc.stdin is not None
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def _pids(path: Path) -> list:
    try:
        return [int(p) for p in path.read_text().split()]
    except (OSError, ValueError):
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("forward", sorted(FORWARDS))
@pytest.mark.parametrize("how", ["SIGKILL", "stdin closed"])
def test_worker_dies_with_the_backend(tmp_path: Path, how: str, forward: str):
    pids = tmp_path / "pids"
    model = tmp_path / "hangs.py"
    model.write_text(HANGS.format(pids=str(pids), forward=FORWARDS[forward]))
    proc = subprocess.Popen(
        server_command(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _send(proc, {"id": 1, "method": "initialize", "params": {"processId": os.getpid(), "capabilities": {}}})
        _send(proc, {"method": "initialized", "params": {}})
        _send(
            proc,
            {
                "id": 2,
                "method": "torchDoctor/runCheck",
                "params": {
                    "uri": model.as_uri(),
                    "className": "Hangs",
                    "check": "shapes",
                    "options": {"timeoutSeconds": 600},
                },
            },
        )
        deadline = time.monotonic() + 120
        while len(_pids(pids)) < 2 and time.monotonic() < deadline:  # the write may be seen half done
            time.sleep(0.1)
        worker, child = _pids(pids)
        assert _alive(worker) and _alive(child)
        time.sleep(0.5)  # into the loop
        if how == "SIGKILL":
            proc.kill()
        else:  # the editor went away: stdin ends, the server exits
            assert proc.stdin is not None
            proc.stdin.close()
        proc.wait(30)
        deadline = time.monotonic() + 20
        while (_alive(worker) or _alive(child)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(worker), f"worker {worker} outlived the backend ({how}, {forward})"
        assert not _alive(child), f"the worker's child {child} outlived the backend ({how}, {forward})"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        for pid in _pids(pids):  # a failed test leaves nothing spinning
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
