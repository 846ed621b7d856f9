"""Statistics of activations and gradients: equal to a direct computation, from whichever source."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from support.collect import calls_by, snap, tiny_cnn, train_steps
from torchdoctor.runtime.collect import install as collect_install
from torchdoctor.runtime.collect.stats import activation_stats, grad_stats


def direct(t: torch.Tensor) -> dict:
    v = t.detach().double().reshape(-1)
    dead = (t.detach() != 0).reshape(t.shape[0], -1).any(dim=0)
    return {
        "mean": float(v.mean()),
        "std": float(v.std()),
        "min": float(v.min()),
        "max": float(v.max()),
        "zeros": float((v == 0).double().mean()),
        "deadUnits": float((~dead).double().mean()),
    }


def close(a, b, rel=1e-5, abs_=1e-7):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def test_live_activation_stats_are_exact():
    torch.manual_seed(0)
    t = torch.relu(torch.randn(16, 8, 5))
    t[:, 3] = 0.0  # a dead unit row
    got, want = activation_stats(t), direct(t)
    for key in ("mean", "std", "min", "max", "zeros", "deadUnits"):
        assert close(got[key], want[key]), key
    assert got["count"] == t.numel() and got["units"] == 40 and got["deadUnitCount"] >= 5
    assert got["nonFinite"] == 0 and got["zeroCount"] == int((t == 0).sum())
    bad = torch.tensor([[1.0, float("nan")], [float("inf"), -2.0]])
    got = activation_stats(bad)
    assert (got["nan"], got["posinf"], got["neginf"], got["nonFinite"]) == (1, 1, 0, 2)
    assert got["min"] == -2.0 and got["max"] == 1.0


def test_reduced_on_the_hot_path_matches_too(collector):
    model = tiny_cnn()
    train_steps(model, steps=1)  # intermediate outputs are freed by the backward: hot-path reductions remain
    s = snap()
    rows = {(c["path"], c["occurrence"]): c for c in s["calls"]}
    assert rows["conv1", 1]["activation"]["source"] == "forward"
    x = torch.randn(8, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    model2 = tiny_cnn()  # the weights of `model` moved since: the same start, recomputed
    with torch.no_grad():
        a = model2.conv1(x)
        act = model2.act(a)
    for name, t in (("conv1", a), ("act", act)):
        got, want = rows[name, 1]["activation"], direct(t)
        for key in ("mean", "min", "max", "zeros"):
            assert close(got[key], want[key], rel=1e-4, abs_=1e-6), (name, key)
        assert close(got["std"], want["std"], rel=1e-3), name
    assert rows["act", 1]["activation"]["deadUnits"] == pytest.approx(direct(act)["deadUnits"])
    assert rows["conv1", 1]["activation"]["deadUnits"] is None  # counted for ReLU-like modules only


def test_constant_outputs_read_std_zero_even_from_sums(collector):
    model = nn.Sequential(nn.Linear(4, 3))
    with torch.no_grad():
        model[0].weight.zero_()
        model[0].bias.fill_(1000.1)
    model(torch.randn(64, 4)).sum().backward()
    collector.tracer.roots.clear()  # forget nothing but the trace: run again with the output dropped
    model(torch.randn(64, 4))
    a = snap()["calls"][1]["activation"]
    assert a["source"] == "forward" and a["std"] == 0.0 and a["mean"] == pytest.approx(1000.1)


def test_gradients_live_and_after_zero_grad(collector):
    model = tiny_cnn()
    train_steps(model, steps=2)
    s = snap()
    assert s["gradients"]["source"] == "backward" and s["gradients"]["latestPass"]
    for p in s["parameters"]:
        g = dict(model.named_parameters())[p["name"]].grad
        assert p["grad"]["source"] == "live"
        assert close(p["grad"]["meanAbs"], float(g.abs().double().mean()))
        assert close(p["grad"]["maxAbs"], float(g.abs().max()))
        assert close(p["grad"]["norm"], float(g.double().norm()))
        assert p["grad"]["nan"] == 0 and p["grad"]["inf"] == 0
    kept = {name: float(p.grad.double().norm()) for name, p in model.named_parameters()}
    del g
    for p in model.parameters():
        p.grad = None  # zero_grad(): the gradients are gone, their reductions stay
    s = snap()
    for p in s["parameters"]:
        assert p["grad"]["source"] == "backward" and close(p["grad"]["norm"], kept[p["name"]], rel=1e-4)


def test_gradients_zeroed_in_place_are_marked_changed(collector):
    model = tiny_cnn()
    train_steps(model, steps=1, zero_grad_after=True, set_to_none=False)
    s = snap()
    assert all(p["changedSinceBackward"] for p in s["parameters"])
    # The moment is the pause: the rows are the zeros the optimizer would see now.
    assert all(p["grad"]["source"] == "live" and p["grad"]["norm"] == 0 for p in s["parameters"])


def test_unsampled_steps_fall_back_to_the_latest_sampled_ones():
    installed = collect_install.install(0.0)
    installed.budget.credit = 1e-12  # enough for one reduction: the first pass; nothing after
    try:
        model = tiny_cnn()
        train_steps(model, steps=3, zero_grad_after=True)
        s = snap()
        conv1 = calls_by(s)["conv1"]["activation"]
        assert conv1["source"] == "earlier" and conv1["fromPass"] == 1
        assert calls_by(s)[""]["activation"]["source"] in ("live", "earlier")
        assert s["collector"]["skippedPasses"] > 0
        # The backwards were not reduced: their gradients, freed by zero_grad(), are gone, and
        # the rows say why.
        assert all(p["grad"] is None and "not sampled" in p["gradNote"] for p in s["parameters"])
    finally:
        collect_install.uninstall()


def test_nan_gradients_are_counted_when_alive(collector):
    model = nn.Linear(3, 2)
    out = model(torch.tensor([[1.0, float("nan"), 0.0]]))
    out.sum().backward()
    s = snap()
    weight = next(p for p in s["parameters"] if p["name"] == "weight")
    assert weight["grad"]["nan"] == 2 and weight["grad"]["maxAbs"] == 1.0
    got = grad_stats(torch.tensor([float("inf"), -3.0, 1.0]))
    assert (got["nan"], got["inf"], got["maxAbs"], got["meanAbs"]) == (0, 1, 3.0, 2.0)
    assert calls_by(s)[""]["activation"]["nan"] == 2


def test_the_input_batch_is_described_while_alive(collector):
    model = nn.Linear(3, 1)
    x = torch.tensor([[1.0, 2.0, 3.0], [float("nan"), 0.0, 0.0]])
    model(x)
    s = snap()
    assert s["input"]["nan"] == 1 and s["input"]["count"] == 6 and s["input"]["zeros"] == pytest.approx(2 / 6)
    del x
    assert snap()["input"] is None


def test_a_backward_that_never_reaches_the_model_reads_the_current_grads(collector):
    model = nn.Linear(2, 2)
    with torch.no_grad():
        model(torch.randn(1, 2))  # no graph: nothing to watch
    (model.weight.sum() * 2).backward()
    s = snap()
    assert s["gradients"]["source"] == "current"
    assert next(p for p in s["parameters"] if p["name"] == "weight")["grad"]["meanAbs"] == pytest.approx(2.0)
    assert next(p for p in s["parameters"] if p["name"] == "bias")["gradNote"].startswith("no gradient")
