"""Overfit one batch: healthy models memorise it; broken ones fail with the seed's causes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from support.checks import MODELS, example, new_result, quiet, write
from torchdoctor.checks import example as E
from torchdoctor.checks import overfit


def run(ex, **options) -> dict:
    # what is learned, not how fast: a loaded machine must not stop a slow learner short
    options.setdefault("timeBudgetSeconds", 900)
    return overfit.run(ex, options, quiet, new_result("overfit"))


def test_healthy_mlp_passes_with_a_falling_curve():
    r = run(example(MODELS / "mlp.py", "TinyMLP"))
    assert r["verdict"] == "PASS", r["headline"]
    loss = r["curve"]["series"][0]["points"]
    assert loss[-1][1] <= max(0.1, 0.1 * loss[0][1])
    assert r["curve"]["series"][1]["name"] == "accuracy" and r["curve"]["series"][1]["points"][-1][1] == 1.0
    assert r["details"]["optimizer"] == "Adam" and r["details"]["lr"] == 1e-3 and r["details"]["batchSize"] == 8


def test_healthy_cnn_passes():
    assert run(example(MODELS / "cnn.py", "TinyCNN"))["verdict"] == "PASS"


def test_model_with_constructor_arguments_passes_through_its_example():
    assert run(example(MODELS / "ctor_args.py", "ConfigurableMLP"))["verdict"] == "PASS"


def test_softmax_before_cross_entropy_is_a_broken_loss():
    r = run(example(MODELS / "softmax_output.py", "SoftmaxClassifier"))
    assert r["verdict"] == "FAIL"
    assert any(s.startswith("Broken loss: the output rows are probabilities") for s in r["sentences"])
    assert r["sentences"][-1] == overfit.SEED_CAUSES


def test_layers_in_a_list_mean_the_optimizer_is_not_connected():
    r = run(example(MODELS / "unregistered_layers.py", "ListMLP"))
    assert r["verdict"] == "FAIL"
    assert r["headline"] == "ListMLP has no trainable parameters, so no optimizer can train it."
    assert r["sentences"][0].startswith("`layers` is a plain list of layers")
    assert any("Optimizer not connected to the parameters" in s for s in r["sentences"])


def test_graph_cut_in_forward_is_named(tmp_path: Path):
    path = write(
        tmp_path,
        "cut.py",
        """
        import torch.nn as nn

        class Cut(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(6, 8)
                self.b = nn.Linear(8, 3)

            def forward(self, x):
                return self.b(self.a(x).detach())   # a never learns
        """,
    )
    r = run(example(path, "Cut"), steps=5)
    assert r["verdict"] == "FAIL"
    assert any("a.weight, a.bias never received a gradient" in s for s in r["sentences"])


def test_misaligned_labels_are_found_in_the_users_batch(tmp_path: Path):
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    x[3] = x[1]
    y = torch.tensor([0, 1, 0, 0, 1, 1])  # rows 1 and 3: same input, different labels
    ex = E.Example(
        model=model,
        inputs=(x,),
        targets=y,
        loss_fn=F.cross_entropy,
        loss_name="cross-entropy",
        source="torchdoctor_example",
    )
    r = run(ex, steps=60)
    assert r["verdict"] == "FAIL"
    assert any(s.startswith("Data and labels misaligned: samples 1 and 3") for s in r["sentences"])


def test_nan_loss_is_reported_with_its_step(tmp_path: Path):
    path = write(
        tmp_path,
        "nan.py",
        """
        import torch
        import torch.nn as nn

        class LogOfNegative(nn.Module):
            def __init__(self):
                super().__init__()
                self.f = nn.Linear(5, 1)

            def forward(self, x):
                return torch.log(self.f(x) - 100.0)
        """,
    )
    r = run(example(path, "LogOfNegative"))
    assert r["verdict"] == "FAIL"
    assert r["headline"].startswith("The loss became nan at step 0")
    assert any("log(0)" in s for s in r["sentences"])
    assert r["curve"]["series"][0]["points"][0][1] != r["curve"]["series"][0]["points"][0][1]  # NaN until sanitised


def test_too_small_a_model_is_suggested_when_the_loss_falls_slowly(tmp_path: Path):
    path = write(
        tmp_path,
        "small.py",
        """
        import torch.nn as nn

        class Bottleneck(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(10, 1), nn.Linear(1, 6))

            def forward(self, x):
                return self.net(x)
        """,
    )
    r = run(example(path, "Bottleneck", {"batchSize": 32}), steps=40)
    assert r["verdict"] == "FAIL"
    assert any("too small" in s for s in r["sentences"])


# ---- issue 14: stopped runs, soft targets, dropout, per-token accuracy, still learning, no gradient


def small_example(loss_fn, targets=None, out_features: int = 3, **kw) -> E.Example:
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)  # the weights: how fast the loss falls depends on them
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, out_features))
    x = torch.randn(8, 4, generator=g)
    t = torch.rand(8, out_features, generator=g) if targets is None else targets
    return E.Example(model=model, inputs=(x,), targets=t, loss_fn=loss_fn, loss_name="custom", **kw)


def test_a_run_stopped_by_nan_says_how_many_steps_ran():
    ex = small_example(F.mse_loss)
    calls = []

    def nan_after_three_forwards(module, args, out):
        calls.append(1)
        return out * float("nan") if len(calls) > 3 else out

    ex.model.register_forward_hook(nan_after_three_forwards)
    r = run(ex)
    assert r["headline"] == "The loss became nan at step 3, so the test stopped after 4 of 200 steps."
    assert r["details"]["steps"] == 4 and r["details"]["maxSteps"] == 200


def test_a_run_stopped_by_a_failing_backward_says_how_many_steps_ran():
    r = run(small_example(lambda out, t: F.mse_loss(out.detach(), t)))
    assert r["verdict"] == "FAIL"
    assert (
        r["headline"]
        == "Sequential could not train: loss.backward() failed at step 0, so the test stopped after 1 of 200 steps."
    )


def test_bce_on_soft_targets_is_judged_above_its_floor():
    ex = small_example(lambda out, t: F.binary_cross_entropy(torch.sigmoid(out), t, reduction="sum"), out_features=6)
    ex.model.append(torch.nn.Sigmoid())
    ex.loss_fn = lambda out, t: F.binary_cross_entropy(out, t, reduction="sum")
    r = run(ex, steps=400)
    floor = float(F.binary_cross_entropy(ex.targets, ex.targets, reduction="sum"))
    assert r["details"]["lossFloor"] == pytest.approx(floor, rel=1e-5)
    assert r["verdict"] == "PASS", r["headline"]
    assert r["details"]["finalLoss"] > 0.1 * r["details"]["initialLoss"]  # "near zero" would never come


def test_mse_has_no_floor():
    r = run(small_example(F.mse_loss), steps=400)
    assert r["details"]["lossFloor"] == 0.0 and r["verdict"] == "PASS"


def test_dropout_modules_and_attributes_are_zeroed_and_restored():
    from torchdoctor.checks.regularisation import dropout_off

    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dropout = 0.1  # nanoGPT: dropout_p=self.dropout if self.training else 0
            self.resid = torch.nn.Dropout(0.2)
            self.drop_last = True  # a flag, not a rate

    model = torch.nn.Sequential(Attn(), torch.nn.LSTM(4, 4, 2, dropout=0.3), torch.nn.Dropout(0.0))
    off = dropout_off(model)
    assert off.layers == ["0.resid"] and off.attributes == ["0.dropout", "1.dropout"]
    assert model[0].dropout == 0.0 and model[0].resid.p == 0.0 and model[1].dropout == 0.0 and model[0].drop_last
    assert off.sentence().startswith(
        "Dropout off for this test: p=0 in 1 dropout layer (0.resid); 0 in 2 dropout attributes"
    )
    off.restore()
    assert (model[0].dropout, model[0].resid.p, model[1].dropout) == (0.1, 0.2, 0.3)
    assert dropout_off(torch.nn.Linear(2, 2)).sentence() is None


def test_a_dropout_mlp_passes_and_the_result_says_dropout_was_off():
    model = torch.nn.Sequential(torch.nn.Linear(4, 32), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(32, 3))
    g = torch.Generator().manual_seed(0)
    ex = E.Example(
        model=model, inputs=(torch.randn(8, 4, generator=g),), targets=torch.arange(8) % 3, loss_fn=F.cross_entropy
    )
    r = run(ex)
    assert r["verdict"] == "PASS" and r["details"]["dropoutOff"] == ["2"], (r["headline"], r["sentences"])
    assert any(s.startswith("Dropout off for this test") for s in r["inferred"])
    assert model[2].p == 0.5


def test_per_token_accuracy_ignores_negative_targets_and_follows_a_models_own_shift():
    from torchdoctor.checks.overfit_measure import accuracy

    t = torch.tensor([[1, 2, 3, -100]])
    logits = torch.nn.functional.one_hot(torch.tensor([[1, 2, 0, 0]]), 5).float() * 10
    ex = E.Example(model=None, inputs=(), targets=t, loss_fn=E.cross_entropy)
    assert accuracy(ex, logits) == pytest.approx(2 / 3)  # the -100 is not counted
    # a causal LM that shifts its labels: position i predicts label i+1
    labels = torch.tensor([[4, 1, 2, 3]])
    shifted = torch.nn.functional.one_hot(torch.tensor([[1, 2, 3, 0]]), 5).float() * 10
    own = torch.nn.functional.cross_entropy(shifted[0, :-1], labels[0, 1:])
    ex = E.Example(model=None, inputs=(), targets=labels, loss_fn=E.model_loss, loss_sees="model")
    assert accuracy(ex, {"loss": own, "logits": shifted}) == 1.0


def test_a_run_still_falling_at_the_last_step_trains_on_while_it_falls():
    r = run(small_example(F.mse_loss), steps=30, lr=3e-3)
    d = r["details"]
    assert r["verdict"] == "PASS" and d["stepLimit"] == 150 and 30 < d["steps"] <= d["maxSteps"] <= 150
    assert d["maxSteps"] in (60, 120, 150)  # doubled while it fell
    said = [s for s in r["inferred"] if s.startswith("The loss was still falling at step 30: trained on while it fell")]
    assert said == [f"The loss was still falling at step 30: trained on while it fell, up to {d['maxSteps']} steps."]


def test_a_slow_learner_gets_the_steps_it_needs_instead_of_a_warning():
    # this model needs about 200 steps at lr 1e-3: with steps=50 it used to stop at 100 with a WARN
    r = run(small_example(F.mse_loss), steps=50, lr=1e-3)
    assert r["verdict"] == "PASS", r["headline"]
    assert 100 < r["details"]["steps"] <= r["details"]["maxSteps"] == 200


def test_a_slow_learner_stopped_by_the_step_limit_is_a_warning_with_its_reason_and_pace():
    r = run(small_example(F.mse_loss), steps=35, lr=1e-3)  # 35 -> 70 -> 140 -> 175, still falling
    assert r["verdict"] == "WARN" and r["details"]["steps"] == r["details"]["maxSteps"] == 175
    assert r["headline"].startswith(
        "Sequential has not memorised one batch (input (8, 4)) yet, but the loss was still falling at step 175"
    )
    (said,) = r["sentences"]
    assert said.startswith("It learns slowly rather than not at all")
    assert "the test stopped because 175 steps is the limit (5 times the option steps, 35)" in said
    more = int(said.split("it needs about ")[1].split(" more")[0])
    assert 8 <= more <= 100  # the model passes at about step 200: some 25 more


def ticking(monkeypatch, ex: E.Example, slower_after: int | None = None) -> None:
    """overfit's clock counts the model's forwards: one second each (two after ``slower_after`` of them),
    whatever the machine's load."""
    now, calls = [0.0], [0]

    def tick(*_):
        calls[0] += 1
        now[0] += 2.0 if slower_after is not None and calls[0] > slower_after else 1.0

    ex.model.register_forward_pre_hook(tick)
    monkeypatch.setattr(overfit, "clock", lambda: now[0])


def test_a_slow_learner_stopped_by_the_time_budget_says_so(monkeypatch):
    # the first 50 steps fit in 70 (ticked) seconds, the next 50 do not: 20 more, then a WARN
    ex = small_example(F.mse_loss)
    ticking(monkeypatch, ex)
    r = run(ex, steps=50, lr=1e-3, timeBudgetSeconds=70)
    assert r["verdict"] == "WARN" and 50 < r["details"]["steps"] < 100, r["headline"]
    said = r["sentences"][0]
    assert "training on would not fit the time budget of 70 s (option timeBudgetSeconds)" in said
    assert "The time budget was set by the option timeBudgetSeconds: raise it" in said
    assert "torchDoctor.checks.timeoutSeconds" in said and r["details"]["stoppedByTime"]


def test_a_budget_too_short_for_any_more_steps_stopped_the_run_and_says_so(monkeypatch):
    # after the first 50 steps (50 ticks) the 52 s budget holds 2 more, fewer than a tenth of 50: no stretch starts
    ex = small_example(F.mse_loss)
    ticking(monkeypatch, ex)
    r = run(ex, steps=50, lr=1e-3, timeBudgetSeconds=52)
    assert r["verdict"] == "WARN" and r["details"]["steps"] == 50, r["headline"]
    assert r["details"]["stoppedByTime"]
    assert "training on would not fit the time budget of 52 s" in r["sentences"][0]


def test_an_extension_cut_short_by_the_deadline_says_the_steps_it_ran(monkeypatch):
    # the first 50 steps take 1 tick each, the next 2: the 50 more planned at that pace do not all fit in 110
    ex = small_example(F.mse_loss)
    ticking(monkeypatch, ex, slower_after=50)
    r = run(ex, steps=50, lr=1e-3, timeBudgetSeconds=110)
    ran = r["details"]["steps"]
    assert r["verdict"] == "WARN" and 50 < ran < 100 and r["details"]["stoppedByTime"], r["headline"]
    said = [s for s in r["inferred"] if s.startswith("The loss was still falling at step 50")]
    assert said == [
        f"The loss was still falling at step 50: trained on while it fell, {ran} steps in all until the time budget "
        "stopped it."
    ]
    assert f"ran out at step {ran} of 100" in r["sentences"][0]


def test_the_time_budget_stops_the_first_steps_too_with_a_warning_and_the_curve_so_far(monkeypatch):
    ex = small_example(F.mse_loss)
    ticking(monkeypatch, ex)
    r = run(ex, steps=50, lr=1e-3, timeBudgetSeconds=10)
    ran = r["details"]["steps"]
    assert r["verdict"] == "WARN" and 10 <= ran < 50 and r["details"]["stoppedByTime"], r["headline"]
    assert len(r["curve"]["series"][0]["points"]) == ran
    assert r["headline"].startswith(
        "Sequential has not memorised one batch (input (8, 4)) yet: the time budget of 10 s"
    )
    assert f"stopped the test after {ran} of 50 steps" in r["headline"]
    (said,) = r["sentences"]
    assert "The time budget was set by the option timeBudgetSeconds: raise it, keeping the check's time limit" in said
    assert "not a FAIL" in said and "a time limit of about" not in said


def test_a_budget_given_as_a_share_of_the_time_limit_says_to_raise_the_limit(monkeypatch):
    from torchdoctor.checks import jobs

    options: dict = {"steps": 50, "timeBudgetShare": 0.9}  # a share the caller sent is not believed
    jobs.give_budget(options, 20)
    assert options == {"steps": 50, "timeBudgetSeconds": jobs.BUDGET_SHARE * 20, "timeBudgetShare": jobs.BUDGET_SHARE}
    mine = {"timeBudgetSeconds": 5, "timeBudgetShare": 0.9}
    jobs.give_budget(mine, 20)
    assert mine == {"timeBudgetSeconds": 5}
    ex = small_example(F.mse_loss)
    ticking(monkeypatch, ex)
    r = overfit.run(ex, options, quiet, new_result("overfit"))
    assert r["verdict"] == "WARN" and r["details"]["stoppedByTime"], r["headline"]
    (said,) = r["sentences"]
    share = f"{jobs.BUDGET_SHARE:.0%}"
    assert (
        f"The time budget is {share} of the check's time limit: raise the setting torchDoctor.checks.timeoutSeconds"
        in said
    )
    assert "a time limit of about" in said and "option timeBudgetSeconds" not in said


def test_without_a_budget_the_default_is_named_as_the_option_to_raise(monkeypatch):
    ex = small_example(F.mse_loss)
    ticking(monkeypatch, ex)
    r = overfit.run(ex, {"steps": 100}, quiet, new_result("overfit"))  # the default 60 s: 60 ticks
    assert r["verdict"] == "WARN" and r["details"]["timeBudgetSeconds"] == overfit.TIME_BUDGET
    assert "The time budget is the default (60 s) of the option timeBudgetSeconds: raise it" in r["sentences"][0]


def test_a_cut_graph_fails_even_when_the_time_budget_stopped_the_run(monkeypatch):
    """The first backward already showed a layer that ran and got no gradient: FAIL, not the unfinished WARN."""
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(8, 4, generator=g), torch.arange(8) % 3
    for cut, verdict in ((False, "WARN"), (True, "FAIL")):
        torch.manual_seed(0)
        ex = E.Example(model=SideNet(cut), inputs=(x,), targets=y, loss_fn=F.cross_entropy)
        ticking(monkeypatch, ex)
        r = run(ex, steps=200, timeBudgetSeconds=5)
        assert r["verdict"] == verdict and r["details"]["stoppedByTime"], r["headline"]
        assert r["details"]["steps"] < 200 and r["details"]["noGradient"]["cut"] == (
            ["side.weight", "side.bias"] if cut else []
        )
    assert r["headline"].startswith("SideNet has not memorised one batch (input (8, 4)) yet (the time budget of 5 s")
    assert "never received a gradient although their layers ran: side.weight, side.bias" in r["headline"]
    assert r["sentences"][0].startswith("Graph cut: side.weight, side.bias took part in the forward")


def test_an_unfinished_run_names_what_it_saw_but_is_no_fail(monkeypatch):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 4, generator=g)
    x[3] = x[1]  # identical inputs, different targets: misaligned
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    ex = E.Example(model=model, inputs=(x,), targets=torch.tensor([0, 1, 0, 0, 1, 1]), loss_fn=F.cross_entropy)
    ticking(monkeypatch, ex)
    r = run(ex, steps=200, timeBudgetSeconds=5)
    assert r["verdict"] == "WARN" and r["details"]["steps"] < 200
    assert r["sentences"][1].startswith("Seen in the steps that ran: Data and labels misaligned: samples 1 and 3")


class Sleepy(torch.nn.Module):
    """A small MLP whose forward takes ~50 ms: 200 steps need ~10 s."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))

    def forward(self, x):
        import time

        time.sleep(0.05)
        return self.net(x)


def test_a_slow_model_is_stopped_by_a_real_time_budget_and_keeps_its_curve():
    import time

    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    ex = E.Example(
        model=Sleepy(),
        inputs=(torch.randn(8, 4, generator=g),),
        targets=torch.rand(8, 3, generator=g),
        loss_fn=F.mse_loss,
        loss_name="custom",
    )
    started = time.monotonic()
    r = run(ex, timeBudgetSeconds=1.0)
    took = time.monotonic() - started
    ran = r["details"]["steps"]
    assert took < 8, took  # 200 steps would take 10 s and more; 1 s of budget and the end's sentences, loaded
    assert r["verdict"] == "WARN" and 1 <= ran < 200 and r["details"]["stoppedByTime"], r["headline"]
    assert "the time budget of 1 s stopped the test after" in r["headline"]
    assert len(r["curve"]["series"][0]["points"]) == ran


def test_through_the_cli_a_slow_model_gets_a_warning_with_its_partial_curve(tmp_path: Path, capsys):
    import json

    from torchdoctor.cli import main

    path = write(
        tmp_path,
        "sleepy.py",
        """
        import time
        import torch
        import torch.nn as nn

        class Sleepy(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                time.sleep(0.05)
                return self.fc(x)

        def torchdoctor_example():
            g = torch.Generator().manual_seed(0)
            return {"model": Sleepy(), "inputs": (torch.randn(8, 4, generator=g),), "targets": torch.rand(8, 3, generator=g)}
        """,
    )
    options = json.dumps({"timeBudgetSeconds": 1})
    assert main(["check", "overfit", f"{path}::Sleepy", "--json", "--timeout", "60", "--options", options]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["verdict"] == "WARN" and r["details"]["stoppedByTime"] and r["details"]["steps"] < 200
    assert len(r["curve"]["series"][0]["points"]) == r["details"]["steps"]


def test_a_plateau_is_not_trained_on():
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    x[3] = x[1]
    ex = E.Example(model=model, inputs=(x,), targets=torch.tensor([0, 1, 0, 0, 1, 1]), loss_fn=F.cross_entropy)
    r = run(ex, steps=200)
    assert r["verdict"] == "FAIL" and r["details"]["maxSteps"] == 200


class SideNet(torch.nn.Module):
    """A side branch that runs and is cut (``.detach()``) or kept, and a spare layer that never runs."""

    def __init__(self, cut: bool):
        super().__init__()
        self.a, self.b, self.side, self.spare = (
            torch.nn.Linear(4, 16),
            torch.nn.Linear(16, 3),
            torch.nn.Linear(4, 16),
            torch.nn.Linear(4, 4),
        )
        self.cut = cut

    def forward(self, x):
        side = self.side(x)
        return self.b(torch.relu(self.a(x)) + (side.detach() if self.cut else 0 * side))


def test_an_unused_layer_warns_and_a_cut_one_fails_even_when_the_batch_is_memorised():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(8, 4, generator=g), torch.arange(8) % 3
    for cut, verdict in ((False, "WARN"), (True, "FAIL")):
        torch.manual_seed(0)
        r = run(E.Example(model=SideNet(cut), inputs=(x,), targets=y, loss_fn=F.cross_entropy), lr=1e-2)
        assert r["verdict"] == verdict, r["headline"]
        assert r["details"]["noGradient"]["unused"] == ["spare.weight", "spare.bias"]
        assert r["details"]["noGradient"]["cut"] == (["side.weight", "side.bias"] if cut else [])
        assert r["headline"].startswith("SideNet memorised the batch in")
