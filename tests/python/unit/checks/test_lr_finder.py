"""LR finder: the sweep, both suggestions, the stop rules, CSV, and the state put back."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from support.checks import CARRIED_STATE_MODEL, MODELS, example, new_result, quiet
from torchdoctor.checks import lr_finder as L


def _net():
    g = torch.Generator().manual_seed(3)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 12), torch.nn.BatchNorm1d(12), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(12, 3)
    )
    x = torch.randn(16, 6, generator=g)
    y = torch.randint(0, 3, (16,), generator=g)
    return model, x, y


@pytest.mark.parametrize("kind", ["adam", "sgd"])
def test_model_optimizer_grads_modes_and_rng_are_restored(kind: str):
    model, x, y = _net()
    optimizer = L.make_optimizer(kind, model.parameters())
    for group in optimizer.param_groups:
        group["lr"] = 0.01
    for _ in range(3):  # a user mid-training: moments, running stats and grads exist
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    model[3].train()  # mixed modes must come back as they were
    before_model = {k: v.clone() for k, v in model.state_dict().items()}
    before_opt = optimizer.state_dict()
    before_opt_state = {
        k: {n: t.clone() if torch.is_tensor(t) else t for n, t in s.items()} for k, s in before_opt["state"].items()
    }
    before_grads = [p.grad.clone() for p in model.parameters()]
    before_rng = torch.random.get_rng_state()

    sweep = L.lr_find(model, optimizer, lambda: F.cross_entropy(model(x), y), num_iter=40)

    assert len(sweep.lrs) > 10  # the sweep really moved the weights
    for k, v in model.state_dict().items():
        assert torch.equal(v, before_model[k]), k
    after = optimizer.state_dict()
    assert [g["lr"] for g in after["param_groups"]] == [0.01]
    for k, s in after["state"].items():
        for n, t in s.items():
            assert torch.equal(torch.as_tensor(t), torch.as_tensor(before_opt_state[k][n])), (k, n)
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), before_grads))
    assert [m.training for m in model.modules()] == [False, False, False, False, True, False]
    assert torch.equal(torch.random.get_rng_state(), before_rng)


def test_state_is_restored_even_when_the_loss_raises():
    model, x, y = _net()
    optimizer = L.make_optimizer("adam", model.parameters())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    calls = {"n": 0}

    def step_loss():
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("user code failed")
        return F.cross_entropy(model(x), y)

    with pytest.raises(RuntimeError):
        L.lr_find(model, optimizer, step_loss)
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def test_stops_when_the_smoothed_loss_passes_four_times_the_best():
    model, x, y = _net()
    optimizer = L.make_optimizer("sgd", model.parameters())
    sweep = L.lr_find(
        model, optimizer, lambda: F.cross_entropy(model(x), y) * 1.0, start_lr=1e-3, end_lr=1e4, num_iter=100
    )
    assert sweep.stopped in ("diverged", "nan")
    assert len(sweep.lrs) < 100
    if sweep.stopped == "diverged":
        assert sweep.smoothed[-1] > 4 * min(sweep.smoothed[:-1])


def test_nan_stops_the_sweep_and_is_not_recorded():
    model, x, y = _net()
    optimizer = L.make_optimizer("sgd", model.parameters())
    calls = {"n": 0}

    def loss():
        calls["n"] += 1
        value = F.cross_entropy(model(x), y)
        return value * float("nan") if calls["n"] > 20 else value

    sweep = L.lr_find(model, optimizer, loss)
    assert sweep.stopped == "nan" and len(sweep.losses) == 20
    assert all(math.isfinite(v) for v in sweep.losses)


def test_both_suggestions_on_a_known_curve():
    # loss falls fastest around 1e-3 (per decade), is lowest at 1e-1, then explodes
    lrs = [10 ** (-7 + 8 * i / 99) for i in range(100)]
    s = [
        2.0 - 1.5 / (1 + math.exp(-(math.log10(lr) + 3) * 3)) + (0 if lr < 0.1 else (math.log10(lr) + 1) ** 2)
        for lr in lrs
    ]
    sug = L.suggestions(L.Sweep(lrs=lrs, losses=s, smoothed=s))
    assert sug["steepest"] == pytest.approx(1e-3, rel=0.25)
    # on the floor just before the rise at 0.1 (the centred average, 3 points each side, sees the rise)
    assert 0.05 <= sug["minimum"] <= 0.1
    assert sug["minimumDiv10"] == pytest.approx(sug["minimum"] / 10)


def test_too_short_a_sweep_suggests_nothing():
    assert L.suggestions(L.Sweep(lrs=[1e-7, 1e-6], losses=[1, 2], smoothed=[1, 2]))["steepest"] is None


def test_run_on_a_sample_model_returns_the_curve_marks_and_csv(tmp_path: Path):
    csv_path = tmp_path / "lr.csv"
    ex = example(MODELS / "cnn.py", "TinyCNN")
    before = {k: v.clone() for k, v in ex.model.state_dict().items()}
    r = L.run(ex, {"csv": str(csv_path), "numIter": 60}, quiet, new_result("lr-find"))
    assert r["verdict"] == "PASS", r["headline"]
    assert r["curve"]["xScale"] == "log"
    assert [s["name"] for s in r["curve"]["series"]] == ["loss", "smoothed"]
    assert [m["label"].split()[0] for m in r["curve"]["marks"]] == ["steepest", "min/10"]
    assert r["details"]["suggestedLr"] and r["details"]["minimumDiv10Lr"]
    assert "steepest descent" in r["headline"] and "10x below the minimum" in r["headline"]
    rows = list(csv.reader(csv_path.open()))
    assert rows[0] == ["step", "lr", "loss", "smoothed_loss"]
    assert len(rows) - 1 == r["details"]["points"]
    assert float(rows[1][1]) == pytest.approx(1e-7)
    assert all(torch.equal(v, before[k]) for k, v in ex.model.state_dict().items())


def test_a_model_without_parameters_is_a_warning_that_names_the_list():
    r = L.run(example(MODELS / "unregistered_layers.py", "ListMLP"), {}, quiet, new_result("lr-find"))
    assert r["verdict"] == "WARN"
    assert r["headline"] == "ListMLP has no trainable parameters: no optimizer to sweep the learning rate of."
    assert r["sentences"][0].startswith("`layers` is a plain list of layers")


def test_steepest_descent_skips_the_start_of_the_sweep():
    # a step of noise at the 2nd point (the bias-corrected average still leans on two values),
    # then the real fall, fastest around 1e-3
    lrs = [10 ** (-7 + 8 * i / 99) for i in range(100)]
    s = [
        2.0 - 1.5 / (1 + math.exp(-(math.log10(lr) + 3) * 3)) + (0 if lr < 0.1 else (math.log10(lr) + 1) ** 2)
        for lr in lrs
    ]
    s[0], s[1], s[2] = 3.0, 2.2, 2.0
    sweep = L.Sweep(lrs=lrs, losses=s, smoothed=s, planned=100)
    sug = L.suggestions(sweep)
    assert sug["steepest"] == pytest.approx(1e-3, rel=0.25)
    assert sug["steepest"] >= lrs[10]


def test_a_slow_step_respaces_the_sweep_to_fit_the_time_budget():
    import time

    model, x, y = _net()
    optimizer = L.make_optimizer("adam", model.parameters())
    step = 0.02

    def slow_loss():
        time.sleep(step)  # one step of a big model
        return F.cross_entropy(model(x), y)

    sweep = L.lr_find(model, optimizer, slow_loss, num_iter=100, time_budget=30 * step)
    # the budget holds 30 sleeps at most: far fewer than the planned 100 points, at least 20
    assert sweep.respaced_at is not None and 2 * L.MIN_POINTS <= len(sweep.lrs) < 60
    if sweep.stopped == "end of sweep":
        assert sweep.lrs[-1] == pytest.approx(L.END_LR, rel=1e-6)  # the curve still reaches the end


def test_a_graph_freed_by_the_previous_step_is_a_fail_in_words(tmp_path: Path):
    from support.checks import write

    path = write(
        tmp_path,
        "carry.py",
        CARRIED_STATE_MODEL,
    )
    r = L.run(example(path, "Carry"), {}, quiet, new_result("lr-find"))
    assert r["verdict"] == "FAIL"
    assert "reused across steps" in r["sentences"][0] and "graph is cut" not in r["sentences"][0]
