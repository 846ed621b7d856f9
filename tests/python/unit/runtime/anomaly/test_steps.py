"""Steps count optimizer updates when the script has optimizers: a GAN's three backward calls
per iteration are one step, and the sentence says whose steps when there are several."""

from __future__ import annotations

import torch
from torch import nn

from support.anomaly import watching


def gan_loop(bad_iteration: int, iterations: int = 6):
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    critic = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_critic = torch.optim.Adam(critic.parameters(), lr=2e-4)
    opt_generator = torch.optim.Adam(generator.parameters(), lr=2e-4)
    bce = nn.BCEWithLogitsLoss()
    for i in range(iterations):
        real = torch.randn(16, 8)
        critic.zero_grad()
        bce(critic(real), torch.ones(16, 1)).backward()
        fake = generator(torch.randn(16, 4))
        bce(critic(fake.detach()), torch.zeros(16, 1)).backward()
        opt_critic.step()
        generator.zero_grad()
        if i == bad_iteration:
            with torch.no_grad():
                generator[2].weight[0, 0] = float("nan")  # planted: a NaN weight in the generator
        bce(critic(generator(torch.randn(16, 4))), torch.ones(16, 1)).backward()
        opt_generator.step()


def test_a_gan_counts_iterations_not_backward_calls():
    with watching() as seen:
        gan_loop(bad_iteration=3)
    report = seen.reports[0]
    assert report["kind"] == "nonfinite_output" and report["qualname"] == "generator.2"
    assert report["step"] == 3 and report["backward_calls"] == 3 * 3 + 2
    assert report["step_optimizer"] == "opt_generator"
    assert "at step 3 of `opt_generator`" in report["sentence"]


def test_hand_written_updates_count_backward_calls():
    torch.manual_seed(0)
    layer = nn.Linear(3, 1)
    with watching() as seen:
        for step in range(4):
            if step == 2:
                with torch.no_grad():
                    layer.bias.fill_(float("nan"))
            layer(torch.randn(5, 3)).sum().backward()
            with torch.no_grad():
                for p in layer.parameters():
                    p -= 0.01 * p.grad
                    p.grad = None
    report = seen.reports[0]
    assert report["step"] == 2 and "step_optimizer" not in report


def test_two_models_stepped_in_turn_do_not_blame_code_for_their_optimizers_nan():
    """Two small regressors, each with its own optimizer, trained one after the other; the first
    one's learning rate is NaN, so its own step writes NaN into its weights."""
    torch.manual_seed(0)
    first, second = nn.Linear(3, 1), nn.Linear(3, 1)
    opt_first = torch.optim.SGD(first.parameters(), lr=float("nan"))
    opt_second = torch.optim.SGD(second.parameters(), lr=0.05)
    with watching() as seen:
        for _ in range(2):
            x, y = torch.randn(6, 3), torch.randn(6, 1)
            for net, opt in ((first, opt_first), (second, opt_second)):
                opt.zero_grad()
                (net(x) - y).pow(2).mean().backward()
                opt.step()
    report = seen.reports[0]
    assert report["qualname"] == "first" and report["params_bad"] == ["weight", "bias"]
    assert "no optimizer step ran" not in report["sentence"]
    assert report["sentence"].endswith(
        "before this step's forward: an update by `opt_first.step()`, or code that writes the weights, put it there"
    )


def test_a_closure_forward_inside_an_lbfgs_step_says_the_step_is_under_way():
    """A quasi-Newton fit whose step size is absurd: the step evaluates its closure at the weights
    it wrote itself, NaN by then; no backward was followed by a finished step yet."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.LBFGS(model.parameters(), lr=1e38, max_iter=5)
    x, y = torch.randn(32, 4), torch.randn(32, 1)

    def closure():
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        return loss

    with watching(mode="log", firstOnly=False) as seen:
        for _ in range(2):
            opt.step(closure)
    nan = [r for r in seen.reports if r["kind"] == "nonfinite_output"]
    assert nan and all(r["params_update"] == "under_way" for r in nan)
    assert not any("no optimizer step ran" in r["sentence"] for r in nan)
    assert (
        "before this forward, which runs inside `opt.step()` (its closure): an update made within"
        in (nan[0]["sentence"])
    )


def test_a_weight_nan_kept_by_a_scaler_skipped_step_is_not_blamed_on_code_between_steps():
    """A NaN written into a weight once (step 2) makes every later gradient NaN, so the GradScaler
    skips every later ``optimizer.step()``: the reports after the first were told "no optimizer
    step ran: code between the steps wrote it", as if the script wrote a NaN each step (open_clip's
    training loop with a planted NaN, 2026-12-07). The weight only kept the NaN it had."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu")
    with watching(mode="log", firstOnly=False) as seen:
        for step in range(5):
            if step == 2:
                with torch.no_grad():
                    model[0].weight[1, 2] = float("nan")
            optimizer.zero_grad()
            loss = model(torch.randn(6, 4)).pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    nan = [r for r in seen.reports if r["kind"] == "nonfinite_output"]
    assert [r["step"] for r in nan] == [2, 3, 4]
    assert "`optimizer.step()` ran since the last backward" in nan[0]["sentence"]
    for later in nan[1:]:
        assert "code between the steps" not in later["sentence"]
        assert later["params_update"] == "skipped"
        assert "the GradScaler skipped `optimizer.step()` after the last backward" in later["sentence"]
