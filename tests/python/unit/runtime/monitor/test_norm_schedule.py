"""When the recorder computes the gradient norm: the schedule on synthetic times, then on real torch."""

from __future__ import annotations

import pytest

from torchdoctor.runtime.monitor import norm_schedule
from torchdoctor.runtime.monitor.norm_schedule import NormSchedule


def run(schedule, steps, norm_s, step_s, every=10):
    """The steps (1-based) at which the norm is computed, the norm and a step costing what they say."""
    out = []
    for step in range(1, steps + 1):
        if schedule.due(1, step % every == 0):
            schedule.computed(1, norm_s)
            out.append(step)
        else:
            schedule.skipped(1)
        schedule.step_time(1, step_s)
    return out


def test_cheap_norm_every_step():
    assert run(NormSchedule(10), 30, norm_s=1e-5, step_s=0.02) == list(range(1, 31))  # 0.05% of the step


def test_costly_norm_is_sampled_and_kept_at_update_ratio_steps():
    got = run(NormSchedule(10), 40, norm_s=4e-4, step_s=0.02)  # 2% of the step: every 4th
    assert got[0] == 1 and {10, 20, 30, 40} <= set(got)
    assert all(0 < b - a <= 4 for a, b in zip(got, got[1:]))
    assert len(got) <= 40 / 4 + 3
    assert NormSchedule(10).interval(1) == 1  # nothing known yet: every step


def test_interval_never_exceeds_every():
    schedule = NormSchedule(5)
    got = run(schedule, 30, norm_s=0.01, step_s=0.02, every=5)  # the norm costs half the step
    assert schedule.interval(1) == 5 and {5, 10, 15, 20, 25, 30} <= set(got)
    assert all(b - a <= 5 for a, b in zip(got, got[1:]))


torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from torchdoctor.runtime.monitor import recorder  # noqa: E402
from torchdoctor.runtime.monitor.config import MonitorConfig  # noqa: E402


def steps_of(clip, budget, monkeypatch, n=12):
    monkeypatch.setattr(norm_schedule, "BUDGET", budget)
    m = recorder.install(MonitorConfig(every=5))
    got = []
    m.listeners.append(lambda kind, payload: got.append(payload) if kind == "step" else None)
    try:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        expected = []
        for _ in range(n):
            optimizer.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            grads = torch.cat([p.grad.flatten() for p in model.parameters()])
            expected.append(torch.linalg.vector_norm(grads).item())
            if clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1e6)
            optimizer.step()
        assert m.errors == []
        return got, expected
    finally:
        recorder.uninstall()


def test_sampled_norms_are_exact_and_at_update_ratio_steps(monkeypatch):
    got, expected = steps_of(False, 1e-12, monkeypatch)  # any norm is too costly: every `every` steps
    present = [s["step"] for s in got if s["grad_norm"] is not None]
    assert {1, 5, 10} <= set(present) and len(present) < len(got)
    assert all(s["update_ratio"] is None or s["grad_norm"] is not None for s in got)
    for s in got:
        if s["grad_norm"] is not None:
            assert s["grad_norm"] == pytest.approx(expected[s["step"] - 1], rel=1e-5)


def test_a_clipped_norm_is_recorded_every_step(monkeypatch):
    got, expected = steps_of(True, 1e-12, monkeypatch)
    assert [s["grad_norm"] for s in got] == pytest.approx(expected, rel=1e-5)


def test_default_budget_on_a_small_model_keeps_exact_values(monkeypatch):
    got, expected = steps_of(False, norm_schedule.BUDGET, monkeypatch)
    assert got[0]["grad_norm"] is not None and got[4]["grad_norm"] is not None
    assert all(s["grad_norm"] == pytest.approx(expected[s["step"] - 1], rel=1e-5) for s in got if s["grad_norm"])
