"""The recorder's device facts on real torch (runtime/monitor/devices.py).

No GPU here: a CPU run must record no copy and say nothing; the ``meta`` device declared an
accelerator (``DeviceWatch.accel``) gives a model off the CPU and real ``.to()`` copies of the
DataLoader's batches (free on meta: the slow copy is a sleep right after it).
"""

from __future__ import annotations

import gc
import inspect
import time
import weakref
from collections import UserDict

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from torchdoctor.runtime.monitor import devices, recorder  # noqa: E402
from torchdoctor.runtime.monitor.config import MonitorConfig  # noqa: E402

KINDS = ("cpu_batches", "model_on_cpu")


class Batches(Dataset):
    """``n`` ready-made batches (``batch_size=None``: no collate time in the data part)."""

    def __init__(self, n, rows, width):
        self.n, self.x = n, torch.ones(rows, width)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.x


@pytest.fixture
def monitor():
    m = recorder.install(MonitorConfig(every=5))
    yield m
    recorder.uninstall()


def loop(device, n=30, rows=128, width=131072, pause=0.0, work=0.01):
    """``work``: what the model's step would cost on a device (meta computes nothing)."""
    model = nn.Linear(width, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Batches(n, rows, width), batch_size=None)
    line = inspect.currentframe().f_lineno - 1
    for x in loader:
        x = x.to(device)
        time.sleep(pause)  # what a slow pageable copy would cost (meta copies are free)
        optimizer.zero_grad()
        model(x).sum().backward()
        time.sleep(work)
        optimizer.step()
    return line


def ours(m):
    return [f for f in m.findings() if f["kind"] in KINDS]


def test_no_accelerator_here():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert devices.accelerator(torch) is None


def test_a_cpu_run_records_no_copy_and_says_nothing(monitor):
    loop("cpu", n=30, width=64, pause=0.003)
    assert monitor.devices.model_type == "cpu" and monitor.devices.copy is None
    assert ours(monitor) == [] and monitor.errors == []


def test_slow_copies_of_big_pageable_batches_on_an_accelerator(monitor):
    monitor.devices.accel = "meta"
    # A 256 MiB batch a step: at least 10.7 ms to copy at 25 GB/s, still >= 5% of a step stretched
    # to 200 ms by a loaded machine (with 64 MiB a step over 54 ms went silent under load 6).
    line = loop("meta", rows=512, pause=0.008)
    found = ours(monitor)
    assert [f["kind"] for f in found] == ["cpu_batches"] and monitor.errors == []
    f = found[0]
    assert f["severity"] == "info" and f["where"]["line"] == line and f["where"]["path"] == __file__
    assert "256 MiB" in f["sentence"] and "pin_memory=True` on the DataLoader at test_devices.py" in f["sentence"]


def test_the_same_loop_with_a_quick_copy_is_silent(monitor):
    # the ordinary `x = x.to(device)` loop whose copy is a small share of the step
    monitor.devices.accel = "meta"
    loop("meta", pause=0.0)
    assert ours(monitor) == [] and monitor.errors == []


def test_a_small_batch_with_a_long_wait_before_the_model_is_silent(monitor):
    # 8 KiB batches: the 8 ms before the forward cannot be their copy (a GPU wait, CPU work)
    monitor.devices.accel = "meta"
    loop("meta", width=16, pause=0.008)
    assert ours(monitor) == [] and monitor.errors == []


def test_the_copy_facts_of_a_step(monitor):
    monitor.devices.accel = "meta"
    seen = []
    step_facts = monitor.devices.step_facts
    monitor.devices.step_facts = lambda models: seen.append(step_facts(models)) or seen[-1]
    loop("meta", n=3, rows=4, width=8, pause=0.002, work=0.0)
    copies = [s["copy"] for s in seen if s and "copy" in s]
    assert len(copies) == 2  # the first batch came before the model was seen off the CPU
    c = copies[-1]
    assert (c["batch"], c["pinned"], c["model"], c["input"], c["busy"]) == ("cpu", False, "meta", "meta", None)
    assert c["bytes"] == 4 * 8 * 4 and c["gap"] >= 0.002


def test_a_model_never_moved_to_an_available_accelerator(monitor):
    monitor.devices.probe = lambda torch: ("cuda", False)  # what an idle GPU answers
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        line = inspect.currentframe().f_lineno - 1
        optimizer.step()
    found = ours(monitor)
    assert [f["kind"] for f in found] == ["model_on_cpu"]
    assert found[0]["step"] == 3 and found[0]["where"]["line"] == line


def test_a_used_accelerator_is_not_a_model_left_behind(monitor):
    monitor.devices.probe = lambda torch: ("cuda", True)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()
    assert ours(monitor) == []


# -- batches and models of every kind: never an error in the user's loop ------------------------


class Sparse(Dataset):
    """Sparse COO batches (no ``nbytes``, no ``is_pinned``) next to a dense one."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return torch.eye(4).to_sparse(), torch.ones(4, 8)


def test_a_sparse_batch_never_reaches_the_training_loop(monitor):
    monitor.devices.accel = "meta"
    model = nn.Linear(8, 1).to("meta")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _, x in DataLoader(Sparse(), batch_size=None):
        optimizer.zero_grad()
        model(x.to("meta")).sum().backward()
        optimizer.step()
    assert monitor.errors == [] and ours(monitor) == []


def test_the_bytes_of_a_batch_count_its_dense_tensors_only():
    watch = devices.DeviceWatch(torch, accel="meta")
    watch.model_type = "meta"
    watch.yielded((torch.eye(3).to_sparse(), torch.ones(3, 4)))
    assert watch.batch["bytes"] == 3 * 4 * 4 and watch.batch["pinned"] is False
    watch.yielded([torch.eye(3).to_sparse()])  # a sparse first tensor: not asked if pinned
    assert watch.batch["bytes"] == 0 and watch.batch["pinned"] is False


def test_a_mapping_batch_is_seen():
    # Hugging Face's BatchEncoding is a Mapping (UserDict), not a dict
    watch = devices.DeviceWatch(torch, accel="meta")
    watch.model_type = "meta"
    watch.yielded(UserDict({"input_ids": torch.ones(2, 5, dtype=torch.int64)}))
    assert watch.batch is not None and watch.batch["bytes"] == 2 * 5 * 8


class WithLazyHead(nn.Module):
    """An auxiliary ``LazyLinear`` not run yet at the check: its parameters have no size."""

    def __init__(self):
        super().__init__()
        self.body, self.aux = nn.Linear(4, 1), nn.LazyLinear(3)

    def forward(self, x):
        return self.body(x)


def test_a_model_with_a_lazy_module_not_yet_run(monitor):
    monitor.devices.probe = lambda torch: ("cuda", False)
    model = WithLazyHead()
    optimizer = torch.optim.SGD(model.body.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()
    found = ours(monitor)
    assert monitor.errors == [] and [f["kind"] for f in found] == ["model_on_cpu"]
    assert "(5 values)" in found[0]["sentence"]  # the Linear(4, 1) only


def test_a_model_moved_by_new_parameters_is_seen_where_it_is():
    # overwrite_module_params_on_conversion: .to() puts new Parameter objects in the module
    watch = devices.DeviceWatch(torch, accel="meta")
    model = nn.Linear(4, 1)
    watch.forward(model, (torch.ones(1, 4),), 0.0)
    assert watch.model_type == "cpu"
    before = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        model.to("meta")
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(before)
    watch.forward(model, (torch.ones(1, 4, device="meta"),), 0.0)
    assert watch.model_type == "meta"


def test_the_watch_keeps_no_model_alive():
    watch = devices.DeviceWatch(torch, accel="meta")
    model = nn.Linear(4, 1)
    weight = weakref.ref(model.weight)
    watch.forward(model, (torch.ones(1, 4),), 0.0)
    del model
    gc.collect()
    assert weight() is None


def test_a_failing_batch_look_is_recorded_not_raised(monitor):
    # whatever the look at a batch meets, the patched DataLoader.__next__ must still return it
    def broken(batch):
        raise RuntimeError("a batch no one foresaw")

    monitor.devices.yielded = broken
    batches = [x for x in DataLoader(Batches(3, 2, 4), batch_size=None)]
    assert len(batches) == 3 and any("a batch no one foresaw" in e for e in monitor.errors)


def with_none_child():
    model = nn.Module()
    model.register_module("gone", None)  # a child slot set to None (allowed)
    model.head = nn.Linear(2, 1)
    return model


@pytest.mark.parametrize(
    "model",
    [
        nn.Linear(4, 1),
        nn.Sequential(nn.ReLU(), nn.Sequential(nn.Identity(), nn.Linear(2, 2)), nn.Linear(3, 3)),
        nn.TransformerEncoderLayer(8, 2),
        nn.ReLU(),
        with_none_child(),
    ],
)
def test_the_first_parameter_is_the_one_parameters_gives(model):
    assert devices.first_parameter(model) is next(model.parameters(), None)
