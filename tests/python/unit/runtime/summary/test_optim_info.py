"""Lines of optimizers, LR schedulers, GradScaler and Generator: what they say is true, user
subclasses work, and reading them changes nothing (no state entry, no step, no draw)."""

import json

import pytest
import torch
from torch import nn

from torchdoctor.runtime.summary.api import stats, summarize
from torchdoctor.runtime.summary.kinds import TRAINING, classify, is_training_object
from torchdoctor.spelling import fmt_bytes

pytestmark = pytest.mark.filterwarnings("error")


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 2))


def _two_groups(model):
    return torch.optim.AdamW(
        [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 1e-4}],
        lr=3e-4,
        betas=(0.9, 0.95),
        weight_decay=0.1,
    )


def test_an_optimizer_before_and_after_its_first_step():
    model = _model()
    opt = _two_groups(model)
    before = summarize(opt)
    assert (
        before
        == "AdamW lr=3e-4/1e-4 betas=(0.9, 0.95) weight_decay=0.1 · 2 groups · 4 params (262 values) · no state yet"
    )
    assert len(opt.state) == 0  # optimizer.state is a defaultdict: reading it added nothing
    model(torch.randn(4, 10)).sum().backward()
    opt.step()
    opt.step()
    after = summarize(opt)
    assert after.startswith(before.rsplit(" · ", 1)[0] + " · step 2 · state ")
    assert "KiB" in after and "for " not in after  # every param has state
    info = stats(opt)
    assert info["kind"] == "optimizer" and info["with_state"] == 4 and info["steps"] == [2, 2]
    json.dumps(info)


def test_params_without_grad_have_no_state_and_that_is_said_not_flagged():
    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model[2].weight.grad = torch.ones_like(model[2].weight)  # only one param has a grad
    opt.step()
    line = summarize(opt)
    assert "step 1" in line and "for 1/4 params" in line and "⚠" not in line


def test_sgd_without_momentum_keeps_no_state_and_is_not_called_unstepped():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 10)).sum().backward()
    opt.step()
    assert summarize(opt) == "SGD lr=0.1 momentum=0 weight_decay=0 · 4 params (262 values) · no state"
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    assert summarize(opt).endswith("momentum=0.9 weight_decay=0 nesterov · 4 params (262 values) · no state yet")
    opt.step()
    assert "state" in summarize(opt).rsplit(" · ", 1)[1]


def test_many_groups_show_the_range_of_a_hyper_parameter():
    model = nn.Sequential(*[nn.Linear(2, 2) for _ in range(6)])
    groups = [{"params": m.parameters(), "lr": 10.0 ** -(i % 3 + 3)} for i, m in enumerate(model)]
    line = summarize(torch.optim.SGD(groups, lr=1.0))
    assert line.startswith("SGD lr=[1e-5, 0.001] ") and "6 groups · 12 params" in line


class Sign(torch.optim.Optimizer):
    """A user's optimizer: its own defaults and an int step in its state."""

    def __init__(self, params, lr=0.01, scale=2.0):
        super().__init__(params, {"lr": lr, "scale": scale})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = state.get("step", 0) + 1
                p.add_(p.grad.sign(), alpha=-group["lr"])


def test_a_user_optimizer_is_read_through_the_base_class_attributes():
    model = _model()
    opt = Sign(model.parameters())
    # unknown whether it keeps any: neither "yet" nor SGD's "no state"
    assert summarize(opt) == "Sign lr=0.01 · 4 params (262 values) · no state so far"
    model(torch.randn(2, 10)).sum().backward()
    for _ in range(3):
        opt.step()
    assert summarize(opt) == "Sign lr=0.01 · 4 params (262 values) · step 3 · state 0 B"


def test_an_optimizer_that_never_called_its_base_init_still_gets_a_line():
    class Broken(torch.optim.Optimizer):
        def __init__(self):
            pass

    assert summarize(Broken()) == "Broken (no param_groups)"


def test_a_scheduler_says_its_lr_epoch_and_settings_and_is_not_stepped():
    model = _model()
    opt = _two_groups(model)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(3):
        opt.step()
        sched.step()
    saved, lrs = sched.state_dict(), [g["lr"] for g in opt.param_groups]
    line = summarize(sched)
    assert line.startswith("CosineAnnealingLR on AdamW lr=") and " · last_epoch=3 · T_max=10 eta_min=0" in line
    assert "/" in line.split(" · ")[0]  # one lr per group
    assert sched.state_dict() == saved and [g["lr"] for g in opt.param_groups] == lrs
    for group in opt.param_groups:
        group["lr"] = 0.5
    assert "(optimizer's lr now 0.5)" in summarize(sched)


def test_plateau_sequential_and_user_schedulers():
    opt = torch.optim.SGD(_model().parameters(), lr=0.1)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=3)
    plateau.step(1.0)
    plateau.step(2.0)
    line = summarize(plateau)
    assert line.startswith("ReduceLROnPlateau on SGD lr=0.1 · last_epoch=2 · mode=min factor=0.1 patience=3")
    assert line.endswith("best=1 · 1 bad epoch")
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=4)
    step = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
    assert " · of LinearLR, StepLR" in summarize(torch.optim.lr_scheduler.SequentialLR(opt, [warm, step], [4]))

    class Warmup(torch.optim.lr_scheduler.LRScheduler):
        def get_lr(self):
            return [base * min(1.0, (self.last_epoch + 1) / 10) for base in self.base_lrs]

    assert summarize(Warmup(opt)).startswith("Warmup on SGD lr=")


def test_a_grad_scaler_before_use_after_steps_and_with_inf_grads():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    assert summarize(scaler) == "GradScaler cpu scale=65536 (not used yet) · 0/2000 clean steps to ×2"
    scaler.scale(model(torch.randn(2, 10)).sum()).backward()
    scaler.step(opt)
    assert summarize(scaler).endswith("· stepped, update() pending")
    scaler.update()
    assert summarize(scaler) == "GradScaler cpu scale=65536 · 1/2000 clean steps to ×2"
    opt.zero_grad()
    scaler.scale(model(torch.full((2, 10), float("inf"))).sum()).backward()
    scaler.unscale_(opt)
    assert summarize(scaler).endswith("· grads unscaled ⚠ Inf/NaN in grads: step will be skipped")
    scaler.step(opt)
    scaler.update()
    assert summarize(scaler) == "GradScaler cpu scale=32768 · 0/2000 clean steps to ×2"
    assert summarize(torch.amp.GradScaler("cpu", enabled=False)) == "GradScaler cpu disabled"


def test_a_generator_says_its_seed_and_is_not_drawn_from():
    gen = torch.Generator().manual_seed(42)
    global_state, own_state = torch.get_rng_state(), gen.get_state()
    assert summarize(gen) == "Generator cpu initial_seed=42 (state as seeded)"
    assert torch.equal(gen.get_state(), own_state) and torch.equal(torch.get_rng_state(), global_state)
    torch.rand(3, generator=gen)
    assert summarize(gen) == "Generator cpu initial_seed=42"


def test_these_kinds_are_training_objects_and_ordinary_values_are_not():
    opt = torch.optim.SGD(_model().parameters(), lr=0.1)
    for obj in (opt, torch.optim.lr_scheduler.StepLR(opt, 2), torch.Generator(), torch.amp.GradScaler("cpu")):
        assert classify(obj) == TRAINING and is_training_object(type(obj))
    assert not is_training_object(int) and not is_training_object(dict) and not is_training_object("x")


def test_a_resumed_scaler_counts_from_its_checkpoint():
    saved = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    state = saved.state_dict()
    state["_growth_tracker"] = 2
    resumed = torch.amp.GradScaler("cpu")
    resumed.load_state_dict(state)
    assert summarize(resumed) == "GradScaler cpu scale=1024 (not used yet) · 2/3 clean steps to ×2"


def test_lbfgs_state_counts_its_history_and_is_not_called_partial():
    model = _model()
    opt = torch.optim.LBFGS(model.parameters(), history_size=3, max_iter=4)
    x = torch.randn(8, 10)

    def closure():
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss.detach()  # LBFGS reads it with float(): torch 2.8 warns on a tensor that needs grad

    opt.step(closure)
    line = summarize(opt)
    stored = sum(
        item.numel() * item.element_size()
        for value in opt.state[next(iter(opt.state))].values()
        for item in (value if isinstance(value, list) else [value])
        if isinstance(item, torch.Tensor)
    )
    assert "for 1/" not in line and line.endswith(f"state {fmt_bytes(stored)}"), line
