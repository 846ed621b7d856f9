"""The recorder in this process, on real torch: what one Step holds, per optimizer."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import torchdoctor  # noqa: E402
from support.monitor import recording  # noqa: E402
from torchdoctor.runtime.monitor import recorder  # noqa: E402
from torchdoctor.runtime.monitor.config import MonitorConfig  # noqa: E402


@pytest.fixture
def monitor():
    with recording(every=5) as m:
        yield m


def steps(m, series=None):
    return [p for k, p in m.events if k == "step" and (series is None or p["series"] == series)]


def train(model, optimizer, n, clip=None, batch=8):
    torch.manual_seed(0)
    for _ in range(n):
        x = torch.randn(batch, 4)
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
    return loss


def test_one_step_per_optimizer_step_with_exact_values(monitor):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD([{"params": [model.weight], "lr": 0.1}, {"params": [model.bias], "lr": 0.01}])
    loss = train(model, optimizer, 10)
    got = steps(monitor)
    assert [s["step"] for s in got] == list(range(1, 11)) and {s["series"] for s in got} == {"opt0"}
    assert got[-1]["loss"] == pytest.approx(loss.item())
    assert got[-1]["lr"] == [0.1, 0.01]
    assert got[0]["update_ratio"] is None and got[4]["update_ratio"] is not None  # every 5 steps
    assert all(r > 0 for r in got[4]["update_ratio"])
    assert set(got[-1]["time"]) == {"data", "forward", "backward", "optimizer", "other"}
    assert got[-1]["samples_per_s"] > 0 and got[-1]["rss"] > 0
    assert monitor.errors == []


def test_grad_norm_before_and_after_clipping(monitor):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: the same gradients every step
    x = torch.randn(8, 4) * 100
    optimizer.zero_grad()
    model(x).sum().backward()
    expected = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()])).item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    s = steps(monitor)[-1]
    assert s["grad_norm"] == pytest.approx(expected, rel=1e-5)
    assert s["grad_norm_clipped"] == pytest.approx(1.0, rel=1e-4)
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()  # no clipping this time
    s = steps(monitor)[-1]
    assert s["grad_norm"] == pytest.approx(expected, rel=1e-5) and s["grad_norm_clipped"] is None


def test_gan_has_two_series_with_their_own_losses(monitor):
    g, d = nn.Linear(2, 1), nn.Linear(1, 1)
    opt_d, opt_g = torch.optim.Adam(d.parameters()), torch.optim.Adam(g.parameters())
    for _ in range(6):
        opt_d.zero_grad()
        d_loss = d(g(torch.randn(4, 2)).detach()).mean() + 10
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = -d(g(torch.randn(4, 2))).mean()
        g_loss.backward()
        opt_g.step()
    d_steps, g_steps = steps(monitor, "opt0"), steps(monitor, "opt1")
    assert len(d_steps) == len(g_steps) == 6
    assert d_steps[-1]["loss"] == pytest.approx(d_loss.item()) and g_steps[-1]["loss"] == pytest.approx(g_loss.item())


def test_without_an_optimizer_each_backward_is_a_step(monitor):
    w = torch.ones(3, requires_grad=True)
    for i in range(4):
        (w * (i + 1)).sum().backward()  # a script that updates nothing (or by hand)
    got = steps(monitor)
    assert [s["series"] for s in got] == ["backward"] * 4 and [s["loss"] for s in got] == [3.0, 6.0, 9.0, 12.0]


def test_evaluation_loss_placed_at_the_step_it_followed(monitor):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.MSELoss()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    values = []
    for _epoch in range(3):
        train(model, optimizer, 5)
        model.eval()
        with torch.no_grad():
            values.append((criterion(model(x[:8]), y[:8]).item() + criterion(model(x[8:]), y[8:]).item()) / 2)
        model.train()
    train(model, optimizer, 1)
    monitor.flush()
    evals = [p for k, p in monitor.events if k == "eval"]
    assert [e["step"] for e in evals] == [5, 10, 15]
    assert [e["loss"] for e in evals] == pytest.approx(values, rel=1e-5)
    assert monitor.series["eval/loss"].count == 3


def test_data_time_and_batch_size_from_the_loader(monitor):
    import time

    # 10 ms an item: a step lasts over 120 ms, so a preemption between the recorder's clock and
    # the record's wall-clock "t" on a loaded machine stays far inside the rel=0.5 below.
    item = 0.01

    class Slow(torch.utils.data.Dataset):
        def __len__(self):
            return 48

        def __getitem__(self, i):
            time.sleep(item)
            return torch.randn(4), torch.randn(1)

    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in torch.utils.data.DataLoader(Slow(), batch_size=12):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    got = steps(monitor)
    assert len(got) == 4
    assert all(s["time"]["data"] >= 12 * item for s in got)  # 12 sleeps inside __next__
    assert monitor.loader["num_workers"] == 0 and monitor.loader["where"]["path"] == __file__
    assert got[-1]["samples_per_s"] == pytest.approx(12 / (got[-1]["t"] - got[-2]["t"]), rel=0.5)


def test_user_series(monitor):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train(model, optimizer, 3)
    torchdoctor.log("accuracy", 0.5)
    torchdoctor.log("accuracy", torch.tensor(0.75), step=10)
    users = [p for k, p in monitor.events if k == "user"]
    assert users == [{"name": "accuracy", "step": 3, "value": 0.5}, {"name": "accuracy", "step": 10, "value": 0.75}]
    assert monitor.series["user/accuracy"].count == 2


def test_log_without_a_monitor_does_nothing():
    assert recorder.current() is None
    torchdoctor.log("x", 1.0)  # no error, nothing kept


def test_uninstall_restores_torch():
    original = torch.Tensor.backward
    m = recorder.install(MonitorConfig())
    assert torch.Tensor.backward is not original
    recorder.uninstall()
    assert torch.Tensor.backward is original and m.errors == []


def test_compiled_model_is_recorded_and_not_traced(monitor, monkeypatch):
    import os
    import tempfile

    # One inductor cache per kernel set: torch's does not tell them apart, so a run with
    # ATEN_CPU_CAPABILITY=default (one of `make test-portable`'s) after a native or avx2 run
    # reused that run's vectorised C++ and failed to build it ("at::vec has not been declared";
    # the same cause as in anomaly/test_healthy.py, which keeps its cache the same way).
    kernels = os.environ.get("ATEN_CPU_CAPABILITY") or "native"
    monkeypatch.setenv(
        "TORCHINDUCTOR_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"torchdoctor-inductor-{kernels}")
    )
    model = torch.compile(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert [s["loss"] for s in steps(monitor)] == pytest.approx(losses) and monitor.errors == []


def test_loader_advice_speaks_of_pinned_memory_and_the_gpu_only_when_one_is_used(monitor):
    from torchdoctor.runtime.monitor.words import loader_advice

    loader = {"num_workers": 0, "pin_memory": False}
    on_cpu = loader_advice(loader, " at main.py:37", gpu=False)
    assert on_cpu == "Set `num_workers` > 0 (now 0) on the DataLoader at main.py:37"  # pytorch/examples' VAE on a CPU
    on_gpu = loader_advice(loader, " at main.py:37", gpu=True)
    assert "`pin_memory=True` (now False)" in on_gpu and on_gpu.endswith("a faster GPU will not help")
    assert loader_advice(dict(loader, num_workers=4, pin_memory=True), "", gpu=True).startswith(
        "Raise `num_workers` (now 4) on the DataLoader"
    )
    # this run never started CUDA: the recorder's own hint says no more than the CPU advice
    monitor.loader = {"num_workers": 0, "pin_memory": False, "where": {"path": "/x/main.py", "line": 37}}
    assert monitor._hint("loader") == on_cpu
