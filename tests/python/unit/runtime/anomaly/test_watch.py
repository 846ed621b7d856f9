"""The watch on real (small) training loops: each kind of anomaly, where it points, the settings,
and that it changes nothing in a healthy run."""

from __future__ import annotations

import json
import random
import sys

import pytest
import torch
from torch import nn

from support import anomaly as H
from support.anomaly import MLP, data, train, watching
from torchdoctor.runtime.anomaly import watch as anomaly_watch


def line_of(marker: str, path: str = H.__file__) -> str:
    for number, text in enumerate(open(path, encoding="utf-8"), 1):
        if marker in text:
            return f"{path}:{number}"
    raise AssertionError(marker)


FORWARD_LINE, BACKWARD_LINE = line_of("# forward line"), line_of("# backward line")


def poisoned(value: float) -> MLP:
    torch.manual_seed(0)
    model = MLP()
    with torch.no_grad():
        model.fc2.weight[0, 0] = value
    return model


def test_nan_made_by_a_module_is_caught_there_with_finite_inputs():
    model = poisoned(float("nan"))
    x, y = data()
    with watching() as seen:
        train(model, x, y)
    [report] = seen.reports
    assert report["kind"] == "nonfinite_output" and report["phase"] == "forward" and report["step"] == 0
    assert (report["module"], report["module_type"], report["root"], report["qualname"]) == (
        "fc2",
        "Linear",
        "MLP",
        "model.fc2",
    )
    assert report["counts"] == {"nan": 32, "posinf": 0, "neginf": 0, "numel": 64}
    assert report["inputs_bad"] is False and report["params_bad"] == ["weight"]
    assert report["where"] == FORWARD_LINE and report["user_stack"][0].endswith(":forward")
    assert report["sentence"].startswith(
        "NaN in the output of `model.fc2` (Linear) at step 0: 32 of 64 values; its inputs were finite"
    )
    # step 0: no update has run, so the NaN was there from the start (a real script's planted NaN weight)
    assert (
        "already had NaN (`weight`) before any update: its initialisation or a loaded checkpoint" in report["sentence"]
    )
    assert seen.breaks == [report]  # break mode, no debugger: handed to on_break
    json.dumps(report, allow_nan=False)


def test_a_nan_in_weights_shared_with_other_processes_is_not_blamed_on_initialisation():
    model = poisoned(float("nan"))
    model.share_memory()  # hogwild: worker processes step these weights
    x, y = data()
    with watching() as seen:
        train(model, x, y)
    [report] = seen.reports
    assert report["params_bad"] == ["weight"] and report["params_shared"] is True
    assert "an update by a process sharing these weights" in report["sentence"]


def test_nan_in_the_data_says_the_inputs_already_had_it():
    torch.manual_seed(0)
    model = MLP()
    x, y = data()
    x[3, 2] = float("nan")
    with watching() as seen:
        train(model, x, y)
    [report] = seen.reports
    assert report["module"] == "fc1" and report["inputs_bad"] and report["first_bad_in_step"]
    assert report["inputs_counts"]["nan"] == 1
    assert "its inputs already had NaN (1 of 320 values), and no module before it made any" in report["sentence"]


def test_explosion_past_the_threshold():
    model = poisoned(1e3)
    x, y = data()
    with watching(threshold=100.0) as seen:
        train(model, x, y)
    [report] = seen.reports
    assert report["kind"] == "exploding_output" and report["module"] == "fc2" and report["max_abs"] > 100
    assert "above the threshold 100; its inputs were below it" in report["sentence"]


def test_dead_relu_after_dead_steps_in_a_row():
    torch.manual_seed(0)
    model = MLP()
    with torch.no_grad():
        model.fc1.weight.fill_(-1.0)
        model.fc1.bias.fill_(-5.0)
    x, y = data()
    x = x.abs()  # every pre-activation negative
    with watching(deadSteps=3) as seen:
        train(model, x, y)
    [report] = seen.reports
    assert report["kind"] == "dead_output" and report["qualname"] == "model.act" and report["step"] == 2
    assert report["dead_since"] == 0 and report["inputs_max"] < 0
    with watching(deadSteps=0) as seen:
        train(model, x, y)
    assert seen.reports == []


def test_zeros_in_zeros_out_is_not_dead():
    torch.manual_seed(0)
    model = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))
    with watching() as seen:
        train(model, torch.zeros(8, 4), torch.zeros(8, dtype=torch.long))
    assert "dead_output" not in seen.kinds


def test_log_of_zero_in_the_loss_is_named_at_the_backward_line():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.fill_(100.0)
    x, y = torch.ones(4, 3), torch.tensor([[1.0], [0.0], [1.0], [0.0]])
    with watching() as seen:
        p = torch.sigmoid(model(x))
        loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        loss.backward()  # the NaN loss
    [report] = seen.reports
    assert report["kind"] == "loss_nan" and report["modules_clean"] and report["origin_op"]["op"] == "log"
    assert report["sentence"] == (
        "NaN loss at step 0; every module output was finite, so the loss computation "
        "made it: `log` of 4 zeros (LogBackward0)"
    )
    assert report["where"] == line_of("# the NaN loss", __file__)


def test_loss_spike_with_a_learning_rate_far_too_high():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    x = torch.randn(256, 8)
    y = x @ torch.randn(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.4)
    with watching() as seen:
        for _ in range(20):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
    [report] = seen.reports
    assert report["kind"] == "loss_spike" and report["ratio"] > 10 and report["step"] >= 5
    assert "a learning rate too high is the usual cause" in report["sentence"]


class SqrtNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        # the classic: the branch not taken is NaN for h < 0, and its gradient (0 * NaN) is NaN
        return self.fc2(torch.where(h > 0, torch.sqrt(h), torch.zeros_like(h)))


def test_nan_gradient_is_reported_nearest_the_loss_with_the_loss_value():
    torch.manual_seed(0)
    model = SqrtNet()
    with watching() as seen:
        loss = model(torch.randn(16, 4)).mean()
        loss.backward()
    [report] = seen.reports
    assert report["kind"] == "nonfinite_grad" and report["param"] == "model.fc1.bias"
    assert report["bad_params"] == 2 and report["loss"] == pytest.approx(loss.item())
    assert report["sentence"].startswith("NaN in the gradient of `model.fc1.bias` (Linear `model.fc1`) at step 0")


def test_exploding_gradient_names_the_first_parameter_past_the_threshold():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 1))
    with torch.no_grad():
        for layer in model:
            layer.weight.mul_(30)
    with watching(threshold=50.0, checks=["backward"]) as seen:
        model(torch.randn(8, 4)).sum().backward()
    [report] = seen.reports
    assert report["kind"] == "exploding_grad" and report["max_abs"] > 50
    assert report["largest"][0].startswith("model.0.")


def test_an_explosion_made_by_one_layer_is_not_called_growth_toward_the_input():
    """A projection dividing by its own tiny length: only its gradient explodes; no clipping advice."""

    class Normalised(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.project, self.head = nn.Linear(4, 8), nn.Linear(8, 4), nn.Linear(4, 2)
            nn.init.normal_(self.project.weight, std=1e-8)
            nn.init.zeros_(self.project.bias)

        def forward(self, x):
            z = self.project(torch.relu(self.encoder(x)))
            return self.head(z / z.norm(dim=1, keepdim=True))

    torch.manual_seed(0)
    model = Normalised()
    with watching(checks=["backward"]) as seen:
        model(torch.randn(16, 4)).logsumexp(dim=1).mean().backward()
    [report] = seen.reports
    assert report["kind"] == "exploding_grad" and report["param"] == "model.project.bias"
    assert report["bad_params"] == 2 and report["max_abs"] > 10 * report["threshold"]
    assert max(report["nearest_max_abs"], report["farthest_max_abs"]) < report["threshold"]
    assert "make the explosion themselves" in report["sentence"] and "clip" not in report["sentence"]


def test_missing_zero_grad_stops_at_the_optimizer_step():
    torch.manual_seed(0)
    model = MLP()
    x, y = data()
    with watching() as seen:
        train(model, x, y, zero_grad=False)
    [report] = seen.reports
    assert report["kind"] == "stale_grad" and report["step"] == 1 and report["optimizer_type"] == "SGD"
    assert report["example_param"] == "model.fc1.weight" and report["stale_params"] == 4
    assert report["where"] == line_of("optimizer.step()")


def test_first_only_false_reports_once_per_step_and_skip_steps_waits():
    model = poisoned(float("nan"))
    x, y = data()
    with watching(firstOnly=False, mode="log") as seen:
        train(model, x, y, steps=4)
    assert [r["step"] for r in seen.reports] == [0, 1, 2, 3] and seen.breaks == []
    assert {r["action"] for r in seen.reports} == {"log"}
    model = poisoned(float("nan"))
    with watching(skipSteps=2) as seen:
        train(model, x, y, steps=4)
    assert [r["step"] for r in seen.reports] == [2]


def flat_run(steps: int = 60, nan_at: int = 55, grad_only: bool = False, **settings):
    """A loss that cannot fall (lr 0) with a NaN at ``nan_at``: in the loss, or (``grad_only``)
    in a gradient only (the derivative of sqrt(|0|))."""
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    with watching(**settings) as seen:
        for step in range(steps):
            optimizer.zero_grad()
            scale = float("nan") if step == nan_at and not grad_only else 1.0
            loss = nn.functional.mse_loss(model(x) * scale, y)
            if step == nan_at and grad_only:
                loss = loss + (model.bias - model.bias.detach()).abs().sqrt().sum()
            loss.backward()
            optimizer.step()
    return seen


def test_a_trend_is_advice_and_does_not_end_the_watch():
    """In break mode, "loss not decreasing" is noted as advice; the NaN later still breaks."""
    seen = flat_run()
    assert [(r["kind"], r["action"], r["step"], r["advice"]) for r in seen.reports] == [
        ("loss_not_decreasing", "log", 49, True),
        ("loss_nan", "break", 55, False),
    ]
    assert [r["kind"] for r in seen.breaks] == ["loss_nan"]


def test_a_trend_set_to_break_still_never_stops_and_never_hides_an_anomaly():
    """Trend rules set to "break" read as "log"; in log mode advice does not use up its step."""
    seen = flat_run(loss={"notDecreasing": "break"})
    assert [r["kind"] for r in seen.breaks] == ["loss_nan"] and seen.reports[0]["action"] == "log"
    seen = flat_run(steps=50, nan_at=49, grad_only=True, mode="log", firstOnly=False)
    assert [(r["kind"], r["step"]) for r in seen.reports] == [("loss_not_decreasing", 49), ("nonfinite_grad", 49)]


def test_checks_select_what_is_watched():
    model = poisoned(float("nan"))
    x, y = data()
    with watching(checks=["loss"]) as seen:
        train(model, x, y)
    assert seen.kinds == ["loss_nan"] and seen.reports[0]["modules_clean"] is False
    with watching(checks=["backward"]) as seen:
        train(model, x, y)
    assert seen.kinds == ["nonfinite_grad"]


def test_the_device_path_finds_the_same_module_once_per_step():
    """deferred=True runs the accelerator strategy on CPU tensors: checks wait on the device,
    one transfer after backward, and the first bad row names the module."""
    model = poisoned(float("nan"))
    x, y = data()
    with watching(deferred=True) as seen:
        train(model, x, y)
    [report] = seen.reports
    assert report["kind"] == "nonfinite_output" and report["qualname"] == "model.fc2" and report["exact"] is False
    assert report["where"] == BACKWARD_LINE and report["counts"] is None
    assert report["sentence"].endswith("its inputs were not kept (checked at the end of the step)")


def test_healthy_training_is_silent_and_unchanged():
    """sample_workspace/train.py: same losses bit for bit, no reports, no internal errors."""
    sys.path.insert(0, str(H.SAMPLES))
    try:
        import train as sample
    finally:
        sys.path.remove(str(H.SAMPLES))
    plain = sample.train(epochs=2)
    with watching() as seen:
        watched = sample.train(epochs=2)
        errors = list(seen.watch.errors)
    assert watched == plain and seen.reports == [] and errors == []


def test_no_random_numbers_are_drawn():
    bad, (x, y) = poisoned(float("nan")), data()
    torch.manual_seed(1)
    model = MLP()
    state, py_state = torch.random.get_rng_state(), random.getstate()
    with watching(firstOnly=False, mode="log") as seen:
        train(bad, x, y, steps=2)  # reports built, summaries taken
        train(model, x, y, steps=2)
    assert len(seen.reports) == 2
    assert torch.equal(torch.random.get_rng_state(), state) and random.getstate() == py_state


def test_uninstall_restores_torch():
    original = torch.Tensor.backward
    with watching():
        assert torch.Tensor.backward is not original
        assert torch.nn.modules.module._global_forward_hooks
    assert torch.Tensor.backward is original and torch.autograd.backward.__name__ == "backward"
    assert not hasattr(torch.autograd.backward, "__wrapped__")
    assert not torch.nn.modules.module._global_forward_hooks
    assert anomaly_watch.current() is None


def test_direct_autograd_backward_counts_one_step_and_grad_counts_none():
    model = MLP()
    x, y = data()
    with watching() as seen:
        loss = nn.functional.cross_entropy(model(x), y)
        torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
        assert seen.watch.step == 0
        torch.autograd.backward(loss, retain_graph=True)
        loss.backward()
        assert seen.watch.step == 2


def test_outputs_are_not_changed_and_no_graph_is_recorded():
    model = MLP()
    x, y = data()
    with watching():
        out = model(x)
        assert out._version == 0 and out.grad_fn.name() == "AddmmBackward0"
        assert [type(f).__name__ for f, _ in out.grad_fn.next_functions][:2] == ["AccumulateGrad", "ReluBackward0"]


class VAELoss(nn.Module):
    """A loss module of the script's own: a scalar summed over the batch."""

    def forward(self, recon, target):
        return nn.functional.mse_loss(recon, target, reduction="sum")


def test_sum_reduced_loss_modules_are_not_exploding_outputs():
    """``nn.BCELoss(reduction='sum')`` over 64 x 256 pixels is ~1e4 by construction."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 32), nn.ReLU(), nn.Linear(32, 256), nn.Sigmoid())
    images = torch.rand(64, 256)
    for criterion in (nn.BCELoss(reduction="sum"), VAELoss()):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        with watching() as seen:
            for _ in range(3):
                loss = criterion(model(images), images) * 10
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        assert loss.item() > 1e4 and seen.reports == [], criterion


def test_a_nan_from_a_loss_module_is_still_reported():
    model = nn.Linear(4, 1)
    with watching() as seen:
        loss = nn.MSELoss(reduction="sum")(model(torch.randn(8, 4)), torch.full((8, 1), float("nan")))
        loss.backward()
    assert seen.kinds[0] == "nonfinite_output" and seen.reports[0]["module_type"] == "MSELoss"


def test_a_gan_has_one_loss_series_per_backward_line_and_stays_silent():
    """Discriminator on real, on fake, then the generator: three backward() lines per iteration.
    Mixed into one series they look like an oscillating loss that does not decrease."""
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    discriminator = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(32, 1), torch.zeros(32, 1)
    with watching() as seen:
        for _ in range(120):
            opt_d.zero_grad()
            real = bce(discriminator(torch.randn(32, 2) * 0.3 + 2), ones)
            real.backward()
            fake = generator(torch.randn(32, 4))
            bce(discriminator(fake.detach()), zeros).backward()
            opt_d.step()
            opt_g.zero_grad()
            bce(discriminator(fake), ones).backward()
            opt_g.step()
        series = seen.watch.losses
    assert seen.reports == [] and len(series) == 3
    assert all(len(h.history) == 50 and h.count == 120 for h in series.by_site.values())
    assert sorted(series.labels.values())[0].startswith("test_watch.py:")


class _Layer(nn.Module):
    """Forward-forward's shape (pytorch/examples): each layer trains itself, with its own
    optimizer, through one ``train`` method: one ``backward()`` line, one loss per layer."""

    def __init__(self, start: float) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.full((4,), start))
        self.opt = torch.optim.SGD(self.parameters(), lr=0.01)

    def train(self, steps: int = 60):  # type: ignore[override]  # the example's own name
        for _ in range(steps):
            self.opt.zero_grad()
            loss = self.w.pow(2).mean()
            loss.backward()
            self.opt.step()
        return self


def test_layers_trained_through_one_method_are_separate_losses():
    # layer 1 falls 1.0 -> 0.3, then layer 2 starts higher (2.0) and falls to 0.6: one curve made
    # of both reads "not decreasing" (its last 25 above its first 25)
    with watching() as seen:
        layers = [_Layer(1.0), _Layer(1.42)]
        for layer in layers:  # one calling line, as the example's loop over its layers
            layer.train()
    assert [r["kind"] for r in seen.reports] == []
    with watching() as seen:  # one layer whose loss truly stays flat is still advised
        flat = _Layer(1.0)
        flat.opt.param_groups[0]["lr"] = 0.0
        flat.train()
    assert [r["kind"] for r in seen.reports] == ["loss_not_decreasing"]


def test_two_models_trained_by_one_line_in_turn_are_two_losses():
    """MorvanZhou's batch-norm comparison: ``for net, opt in zip(nets, opts)`` with one
    ``backward()`` line. Their losses alternate (one net far behind the other): one curve read
    as "oscillating" with no net progress; two curves, each falling, are healthy."""
    torch.manual_seed(0)
    nets = [nn.Linear(1, 1), nn.Linear(1, 1)]
    with torch.no_grad():
        nets[0].weight.fill_(0.0)
        nets[1].weight.fill_(30.0)  # far off: its loss stays far above the other's
    opts = [torch.optim.SGD(net.parameters(), lr=1e-3) for net in nets]
    x = torch.linspace(-1, 1, 32).unsqueeze(1)
    with watching() as seen:
        for _ in range(80):
            for net, opt in zip(nets, opts):
                loss = (net(x) - x).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
    assert [r["kind"] for r in seen.reports] == []


def test_a_spike_in_adversarial_training_is_advice():
    """pytorch/examples' DCGAN: the discriminator's loss on fakes jumped 0.36 -> 6.3 (17x) at
    step 14 when the generator won a step: a GAN's normal game, not a stop. A spike of a single
    model's loss is still an anomaly (test_loss_spike_with_a_learning_rate_far_too_high)."""
    torch.manual_seed(0)
    critic, maker = nn.Linear(2, 1), nn.Linear(2, 2)
    opt_d = torch.optim.SGD(critic.parameters(), lr=0.0)
    opt_g = torch.optim.SGD(maker.parameters(), lr=0.0)
    x = torch.randn(16, 2)
    with watching() as seen:
        for i in range(30):
            opt_d.zero_grad()
            d_loss = critic(x).pow(2).mean() * (40.0 if i == 20 else 1.0)  # the generator wins a step
            d_loss.backward()
            opt_d.step()
            opt_g.zero_grad()
            g_loss = critic(maker(x)).pow(2).mean()
            g_loss.backward()
            opt_g.step()
    [report] = seen.reports
    assert report["kind"] == "loss_spike" and report["advice"] is True and seen.breaks == []
    assert "often the other model winning a step" in report["sentence"]


def test_the_first_internal_error_is_said_once(capsys):
    with watching() as seen:
        seen.watch._error(RuntimeError("a check broke"))
        seen.watch._error(ValueError("another one"))
    err = capsys.readouterr().err
    assert err.count("[torchdoctor] internal error in the anomaly watch: ") == 1
    assert "RuntimeError: a check broke (the watch goes on; later ones are not shown)" in err
    assert seen.watch.errors == ["RuntimeError: a check broke", "ValueError: another one"]


def test_outputs_made_under_inference_mode_are_checked_without_an_internal_error(capsys):
    """An evaluation under ``torch.inference_mode()`` (a U-Net's ``evaluate``, many trainers):
    inference tensors have no version counter, and reading it made every check fail."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    with watching() as seen:
        with torch.inference_mode():
            model(torch.randn(4, 8))  # healthy: silent
            assert seen.reports == []
            model(torch.randn(4, 8) * 1e5)  # an exploding input: reported
    assert seen.kinds == ["exploding_output"] and seen.reports[0]["module"].endswith("0")  # the first Linear
    assert "internal error" not in capsys.readouterr().err


class Twins(nn.Module):
    """A model whose forward returns its own loss, as Barlow Twins' does (0-d, large by construction)."""

    def __init__(self) -> None:
        super().__init__()
        self.projector = nn.Linear(8, 8192)

    def forward(self, a, b):
        za, zb = self.projector(a), self.projector(b)
        c = (za.T @ zb) / a.shape[0]
        return (c.diagonal() - 1).pow(2).sum() + 0.005 * (c - torch.diag(c.diagonal())).pow(2).sum()


def test_a_model_returning_its_own_large_loss_is_no_exploding_output():
    torch.manual_seed(0)
    model = Twins()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    with watching() as seen:
        for _ in range(3):
            loss = model(torch.randn(8, 8), torch.randn(8, 8))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert loss.item() > 1e4 and seen.reports == []


class Root(nn.Module):
    """A square root with no guard: NaN for every negative value it is given."""

    def forward(self, x):
        return x.sqrt()


@pytest.mark.parametrize("deferred", [False, True])
def test_log_mode_a_lesser_anomaly_does_not_hide_a_later_nan_of_the_same_step(deferred):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), Root(), nn.Linear(4, 1))
    with torch.no_grad():
        model[0].weight.mul_(1e6)  # the first layer explodes: a lesser anomaly, reported first
    x = torch.randn(8, 4)
    with watching(deferred=deferred, firstOnly=False, mode="log") as seen:
        for _ in range(3):
            model(x).sum().backward()
    by_step = [[(r["kind"], r["module"]) for r in seen.reports if r["step"] == s] for s in range(3)]
    # each step: the explosion, then the NaN the square root made later in it; nothing more
    assert by_step == [[("exploding_output", "0"), ("nonfinite_output", "2")]] * 3
