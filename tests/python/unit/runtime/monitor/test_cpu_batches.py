"""``cpu_batches``: the rule on synthetic per-step device facts, then the recorder gathering them.

This machine has no GPU and CUDA is never faked. The rule's device test is a parameter
(``Verdicts.accelerator``), so the synthetic tests name "cuda" as the facts a GPU run would give,
and the recorder tests run a real training loop on the ``meta`` device (real ``Tensor.to``
copies from the CPU, real forwards, backwards and optimizer steps, no data) with ``meta``
declared an accelerator; by default ``meta`` is not one, and a CPU model never is.
"""

from __future__ import annotations

import pytest

from torchdoctor.runtime.monitor.verdicts import Verdicts, is_accelerator

MiB = 2**20


def facts(copied=True, model="cuda", inputs="cuda", pinned=False, non_blocking=False, nbytes=3 * MiB, seconds=0.004):
    return {
        "model": model,
        "input": inputs,
        "copied": copied,
        "pinned": pinned,
        "non_blocking": non_blocking,
        "h2d_bytes": nbytes if copied else 0,
        "h2d_seconds": seconds if copied else 0.0,
    }


def step(n, device, series="opt0", data=0.0):
    return {
        "step": n,
        "series": series,
        "loss": None,
        "lr": [1e-3],
        "update_ratio": None,
        "time": {"data": data, "forward": 0.004, "backward": 0.008, "optimizer": 0.001, "other": 0.005},
        "rss": None,
        "cuda": None,
        "device": device,
    }


def judge(devices, verdicts=None, **kwargs):
    v = verdicts or Verdicts()
    found = []
    for i, device in enumerate(devices):
        found += v.step(step(i + 1, device, **kwargs))
    return [f for f in found if f["kind"] == "cpu_batches"]


def test_gpu_model_fed_from_the_cpu_every_step():
    found = judge([facts()] * 30)
    assert len(found) == 1  # once, as soon as it holds
    f = found[0]
    assert (f["severity"], f["step"], f["range"], f["about"]) == ("warning", 20, [1, 20], "copy")
    text = f["sentence"]
    assert "cuda" in text and "20 of the last 20" in text and "3 MiB a step" in text
    assert "not pinned" in text and "torch.randn(..., device=device)" in text and "pin_memory=True" in text
    assert "non_blocking=True" in text and "% of those steps' time" in text


def test_a_cpu_model_is_never_flagged():
    assert judge([facts(model="cpu", inputs="cpu")] * 60) == []
    assert not is_accelerator("cpu") and not is_accelerator("meta")
    assert is_accelerator("cuda") and is_accelerator("mps") and is_accelerator("xpu")


def test_pinned_and_non_blocking_is_fine_but_pinned_and_blocking_is_not():
    assert judge([facts(pinned=True, non_blocking=True)] * 60) == []
    (f,) = judge([facts(pinned=True, non_blocking=False)] * 60)
    assert "pinned memory but blocking" in f["sentence"]
    (f,) = judge([facts(pinned=False, non_blocking=True)] * 60)
    assert "cannot help" in f["sentence"]


def test_a_one_off_copy_is_not_flagged():
    on_device = facts(copied=False)
    assert judge([facts()] + [on_device] * 99) == []  # a batch moved once (the first step)
    assert judge([on_device] * 10 + [facts()] + [on_device] * 89) == []
    assert judge([None] * 100) == []  # no training forward with a tensor seen


def test_sustained_means_80_percent_of_20_steps():
    on_device = facts(copied=False)
    assert judge([facts()] * 19) == []  # fewer than 20 steps: not yet
    # 15 of every 20 steps (75%): silent however long it lasts
    assert judge(([facts()] * 3 + [on_device]) * 25) == []
    # 16 of 20 (80%): judged at a copied step, on the 20 steps that end with it
    (f,) = judge([on_device] * 4 + [facts()] * 16)
    assert f["step"] == 20 and f["range"] == [1, 20] and "16 of the last 20" in f["sentence"]
    (f,) = judge([facts()] * 4 + [on_device] + [facts()] * 12 + [on_device] * 3 + [facts()])
    assert f["step"] == 21 and f["range"] == [2, 21] and "16 of the last 20" in f["sentence"]


def test_the_device_test_is_a_parameter():
    cpu = facts(model="cpu", inputs="cpu")
    assert judge([cpu] * 30) == []
    (f,) = judge([cpu] * 30, Verdicts(accelerator=lambda device: device == "cpu"))
    assert f["range"] == [1, 20] and "The model is on cpu" in f["sentence"]
    # and a model on the accelerator fed by a batch that is not on it is not a host copy of its input
    assert judge([facts(inputs="cpu")] * 30) == []


def test_reported_once_per_run_across_series():
    v = Verdicts()
    found = []
    for i in range(40):
        found += v.step(step(i + 1, facts(), series="opt0"))
        found += v.step(step(i + 1, facts(), series="opt1"))
    assert [(f["kind"], f["series"]) for f in found] == [("cpu_batches", "opt0")]


def test_a_dataloader_fed_run_names_the_dataloader():
    v = Verdicts()
    v.hint = lambda kind: "the DataLoader at train.py:30 (pin_memory=False)" if kind == "copy" else ""
    (f,) = judge([facts()] * 20, v, data=0.002)
    assert "the DataLoader at train.py:30 (pin_memory=False)" in f["sentence"]
    (f,) = judge([facts()] * 20, Verdicts(), data=0.0)  # made in the loop: no DataLoader named
    assert "DataLoader at" not in f["sentence"] and "made on the CPU" in f["sentence"]


# -- the recorder, on real torch ------------------------------------------------------------------

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from torchdoctor.runtime.monitor import recorder, report, run  # noqa: E402
from torchdoctor.runtime.monitor.config import MonitorConfig  # noqa: E402

ORIGINAL_TO = torch.Tensor.to


@pytest.fixture
def monitor():
    m = recorder.install(MonitorConfig())
    events = []
    m.listeners.append(lambda kind, payload: events.append((kind, payload)))
    m.events = events
    yield m
    recorder.uninstall()
    assert torch.Tensor.to is ORIGINAL_TO  # the copy wrappers are taken out with the rest


def steps(m):
    return [p for k, p in m.events if k == "step"]


def kinds(m):
    return [f["kind"] for f in m.findings()]


def train(device, n, batch=lambda: torch.randn(8, 4), move=lambda x, device: x.to(device)):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(n):
        x = move(batch(), device)
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()


def test_cpu_model_facts_and_no_verdict(monitor):
    train("cpu", 30, move=lambda x, device: x.to(device).to(torch.float64).float())
    got = steps(monitor)
    assert len(got) == 30
    assert all(
        s["device"]
        == {"model": "cpu", "input": "cpu", "copied": False, "pinned": False, "non_blocking": False}
        | {"h2d_bytes": 0, "h2d_seconds": 0.0}
        for s in got
    )
    assert torch.Tensor.to is ORIGINAL_TO  # a CPU model never wraps the copies: hot path unchanged
    assert "cpu_batches" not in kinds(monitor) and monitor.errors == []


def test_meta_is_not_an_accelerator_by_default(monitor):
    train("meta", 30)
    got = steps(monitor)
    assert got[-1]["device"]["model"] == "meta" and got[-1]["device"]["copied"] is False
    assert torch.Tensor.to is ORIGINAL_TO and "cpu_batches" not in kinds(monitor)
    assert got[-1]["loss"] is None  # a meta loss has no value; the step is recorded all the same


def test_batches_made_on_the_cpu_and_moved_each_step(monitor):
    monitor.verdicts.accelerator = lambda device: device == "meta"  # stands in for a GPU here
    train("meta", 30, move=lambda x, device: x.to(device, non_blocking=True))
    line = _line_of("x.to(device, non_blocking=True)")
    got = steps(monitor)
    assert got[0]["device"]["copied"] is False  # the copies are wrapped from the first forward on
    later = got[1]["device"]
    assert later["copied"] and later["model"] == later["input"] == "meta" and later["non_blocking"]
    assert later["pinned"] is False and later["h2d_bytes"] == 8 * 4 * 4
    (f,) = [f for f in monitor.findings() if f["kind"] == "cpu_batches"]
    assert f["range"] == [1, 20] and "19 of the last 20" in f["sentence"]
    assert f["where"] == {"path": __file__, "line": line}
    assert monitor.errors == []


def test_a_dataloader_without_pin_memory_is_named(monitor):
    monitor.verdicts.accelerator = lambda device: device == "meta"
    data = torch.utils.data.TensorDataset(torch.randn(240, 4))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    model = nn.Linear(4, 1).to("meta")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for (x,) in loader:
        x = x.to("meta").unsqueeze(0)  # a view of the copy is still the copied batch
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    (f,) = [f for f in monitor.findings() if f["kind"] == "cpu_batches"]
    assert f["where"]["line"] == _line_of('x = x.to("meta").unsqueeze(0)')
    assert f"DataLoader at {__file__.rsplit('/', 1)[-1]}:" in f["sentence"] and "pin_memory=False" in f["sentence"]


def test_batches_made_on_the_device_and_a_validation_copy_are_not_flagged(monitor):
    monitor.verdicts.accelerator = lambda device: device == "meta"
    model = nn.Linear(4, 1).to("meta")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for i in range(40):
        optimizer.zero_grad()
        model(torch.randn(8, 4, device="meta")).sum().backward()
        optimizer.step()
        if i % 10 == 9:
            with torch.no_grad():
                model(torch.randn(64, 4).to("meta"))  # a validation batch: not a training step's
    got = steps(monitor)
    assert all(not s["device"]["copied"] and s["device"]["h2d_bytes"] == 0 for s in got)
    assert torch.Tensor.to is not ORIGINAL_TO  # wrapped (meta declared an accelerator) and silent
    assert "cpu_batches" not in kinds(monitor) and monitor.errors == []


def test_the_finding_reaches_the_report_and_the_cli_lines(monitor, capsys):
    monitor.verdicts.accelerator = lambda device: device == "meta"
    train("meta", 20)
    built = report.build(monitor, __file__)
    (f,) = [f for f in built["findings"] if f["kind"] == "cpu_batches"]
    assert set(f) == {"kind", "severity", "step", "sentence", "where", "series", "range"}
    run._say(built["findings"], built["steps"])
    assert "monitor: cpu_batches (warning, steps 1-20): The model is on meta" in capsys.readouterr().err


def _line_of(text):
    with open(__file__, encoding="utf-8") as source:
        return next(i for i, line in enumerate(source, 1) if text in line and "_line_of" not in line)
