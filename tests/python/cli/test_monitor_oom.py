"""An uncaught ``torch.OutOfMemoryError`` under ``torchdoctor run --monitor`` becomes a
``cuda_oom`` finding (an error) with the largest tensors the failing frames hold and seed 000's
fixes. On a CPU-only machine the script raises the error itself, as the CUDA allocator would."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = """
import torch
from torch import nn

def forward_pass(model, batch):
    activations = torch.zeros(512, 1024)  # 2 MiB: the biggest tensor this frame holds
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
forward_pass(model, torch.randn(2, 4))
"""


def test_out_of_memory_is_explained(tmp_path):
    script = tmp_path / "oom.py"
    script.write_text(SCRIPT)
    report = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "run", "--monitor", "--report", str(report), str(script)],
        capture_output=True,
        text=True,
        timeout=240,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert done.returncode == 1, done.stderr[-2000:]
    found = [f for f in json.loads(report.read_text())["findings"] if f["kind"] == "cuda_oom"]
    assert len(found) == 1, done.stderr[-2000:]
    oom = found[0]
    assert oom["severity"] == "error" and oom["step"] == 3
    assert oom["where"]["path"] == str(script) and oom["where"]["line"] == 7
    assert "`activations` in forward_pass() [512, 1024] 2 MiB" in oom["sentence"]
    assert (
        oom["sentence"].index("batch size")
        < oom["sentence"].index("empty_cache")
        < oom["sentence"].index("checkpointing")
    )
    assert "monitor: cuda_oom (error" in done.stderr
