"""``cpu_batches`` and ``model_on_cpu`` on a real CUDA device (skipped without one).

Written for a session with a GPU; NOT RUN YET (the task that wrote them had none). What each
case expects and why:

- big pageable batches (154 MB: 256 ImageNet-sized images) copied with a blocking ``.to()``
  each step, the loop syncing with ``loss.item()``: reported, "no queued work";
- the same with ``pin_memory=True`` and ``non_blocking=True``: silent;
- a CIFAR-sized batch (768 KiB) in a loop that never syncs, the GPU busy ~5 ms a step
  (``torch.cuda._sleep``): the blocking copy waits for that work, the measured interval is most
  of the step, and the rule stays silent (the bytes cannot cost that);
- a model left on the CPU in a fresh process that never touched the GPU: ``model_on_cpu``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from torchdoctor.runtime.monitor import recorder  # noqa: E402
from torchdoctor.runtime.monitor.config import MonitorConfig  # noqa: E402

GPU_WORK = 5_000_000  # torch.cuda._sleep cycles: a few ms of GPU time a step


class Batches(Dataset):
    def __init__(self, n, shape):
        self.n, self.x = n, torch.ones(*shape)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.x


@pytest.fixture
def monitor():
    m = recorder.install(MonitorConfig(every=5))
    yield m
    recorder.uninstall()


def train(shape, n=40, pin=False, sync=True):
    model = nn.Sequential(nn.Flatten(), nn.Linear(math.prod(shape[1:]), 8)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loader = DataLoader(Batches(n, shape), batch_size=None, pin_memory=pin)
    for x in loader:
        x = x.to("cuda", non_blocking=pin)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.cuda._sleep(GPU_WORK)  # the rest of a real model's step
        optimizer.step()
        if sync:
            loss.item()


def kinds(m):
    return [f["kind"] for f in m.findings() if f["kind"] in ("cpu_batches", "model_on_cpu")]


def test_big_pageable_batches_copied_each_step(monitor):
    train((256, 3, 224, 224))
    assert kinds(monitor) == ["cpu_batches"], monitor.findings()
    assert "no queued work" in monitor.findings()[0]["sentence"]


def test_pinned_and_non_blocking_is_silent(monitor):
    train((256, 3, 224, 224), pin=True)
    assert kinds(monitor) == []


def test_a_cheap_copy_in_a_loop_that_never_syncs_is_silent(monitor):
    train((64, 3, 32, 32), n=80, sync=False)
    assert kinds(monitor) == []


def test_a_model_left_on_the_cpu_in_a_fresh_process():
    script = textwrap.dedent(
        """
        import json, torch
        from torch import nn
        from torchdoctor.runtime.monitor import recorder
        from torchdoctor.runtime.monitor.config import MonitorConfig
        m = recorder.install(MonitorConfig())
        model = nn.Linear(16, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(5):
            optimizer.zero_grad()
            model(torch.randn(8, 16)).sum().backward()
            optimizer.step()
        print(json.dumps([f["kind"] for f in m.findings()]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "model_on_cpu" in json.loads(done.stdout.strip().splitlines()[-1])
