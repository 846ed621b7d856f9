"""A dead output needs evidence that no gradient flows: zero-initialised layers are learning."""

from __future__ import annotations

import torch
from torch import nn

from support.anomaly import MLP, data, train, watching


class LoRA(nn.Module):
    """A frozen projection plus up(down(x)), ``up`` zero-initialised (LoRA's B matrix)."""

    def __init__(self, width: int = 16, rank: int = 2) -> None:
        super().__init__()
        self.base = nn.Linear(width, width).requires_grad_(False)
        self.down, self.up = nn.Linear(width, rank, bias=False), nn.Linear(rank, width, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


class GatedBranch(nn.Module):
    """adaLN-Zero's gate: a zero-initialised projection of the condition scales a branch."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.branch = nn.Linear(width, width)
        self.gate = nn.Linear(width, width)
        nn.init.zeros_(self.gate.weight)
        nn.init.zeros_(self.gate.bias)

    def forward(self, x, c):
        return x + self.gate(c) * self.branch(x)


def accumulate(model, steps: int, micro: int, with_condition: bool = False, zero_grad_each: bool = False):
    torch.manual_seed(1)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    head = nn.Linear(16, 1)
    for step in range(steps):
        x = torch.randn(8, 16)
        out = model(x, torch.randn(8, 16)) if with_condition else model(x)
        loss = head(out).pow(2).mean() / micro
        loss.backward()
        if (step + 1) % micro == 0:
            optimizer.step()
            optimizer.zero_grad()
        elif zero_grad_each:
            optimizer.zero_grad()


def test_lora_b_with_accumulation_over_four_micro_steps_is_not_dead():
    torch.manual_seed(0)
    model = LoRA()
    with watching(deadSteps=3) as seen:
        accumulate(model, 16, micro=4)
    assert seen.reports == [] and seen.watch.errors == []
    assert model.up.weight.abs().max() > 0  # it learned


def test_adaln_zero_gate_with_accumulation_is_not_dead():
    torch.manual_seed(0)
    with watching(deadSteps=3) as seen:
        accumulate(GatedBranch(), 12, micro=6, with_condition=True)
    assert seen.reports == [] and seen.watch.errors == []


def test_zero_output_with_no_gradient_to_its_parameters_is_dead():
    """A zero layer whose output is multiplied by 0 learns nothing: its gradients are 0 too. With
    ``zero_grad()`` before every forward there is no gradient yet at the third zero output: the
    verdict waits for that step's backward and stops there."""
    torch.manual_seed(0)
    model = nn.Linear(16, 16)
    nn.init.zeros_(model.weight)
    nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with watching(deadSteps=3) as seen:
        for _ in range(5):
            optimizer.zero_grad()
            x = torch.randn(8, 16)
            loss = (model(x) * 0.0).sum() + x.sum() * 0.0
            loss.backward()  # dead backward line
            optimizer.step()
    [report] = seen.reports
    assert report["kind"] == "dead_output" and report["step"] == 2 and report["dead_since"] == 0
    assert report["evidence"] == "no_flow" and report["qualname"] == "model"
    assert report["where"].endswith(f"test_dead.py:{_line('# dead backward line')}")
    assert "its parameters' gradients are 0 as well" in report["sentence"]


def _dead_relu_mlp() -> MLP:
    """An MLP whose ReLU is dead on positive inputs: weights -1, biases -5 (seed 002)."""
    torch.manual_seed(0)
    model = MLP()
    with torch.no_grad():
        model.fc1.weight.fill_(-1.0)
        model.fc1.bias.fill_(-5.0)
    return model


def test_a_dead_relu_is_still_dead_from_its_zeros_alone():
    model = _dead_relu_mlp()
    x, y = data()
    with watching(deadSteps=3) as seen:
        train(model, x.abs(), y)
    [report] = seen.reports
    assert report["qualname"] == "model.act" and report["step"] == 2 and report["evidence"] == "no_params"


def test_a_loss_that_reaches_exactly_zero_is_a_perfect_fit_not_a_dead_output():
    """A confident classifier's cross-entropy underflows to exactly 0.0 (logits 200 apart): its
    input is not zero and its output is, step after step, yet nothing is wrong with the run."""
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    x, y = torch.randn(8, 4), torch.zeros(8, dtype=torch.long)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.copy_(torch.tensor([200.0, 0.0, 0.0]))
    with watching(deadSteps=3) as seen:
        for _ in range(5):
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    assert loss.item() == 0.0  # the case this test is about: the loss really is 0
    assert seen.reports == [] and seen.watch.errors == []


def _line(marker: str) -> int:
    for number, text in enumerate(open(__file__, encoding="utf-8"), 1):
        if marker in text and "_line(" not in text:
            return number
    raise AssertionError(marker)


def test_a_dead_streak_in_a_gan_is_counted_in_the_optimizers_steps():
    """Two backwards per iteration (PyTorch-GAN's EBGAN): the report's step is the
    discriminator's optimizer step, and so must the streak's start be (it read "-24 steps"), and
    its length, which ``deadSteps`` is compared with."""
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
    maker = nn.Linear(4, 10)
    opt_d = torch.optim.SGD(critic.parameters(), lr=0.0)
    opt_g = torch.optim.SGD(maker.parameters(), lr=0.0)
    x = torch.rand(8, 10)
    with watching(deadSteps=6) as seen:
        for i in range(12):
            if i == 4:  # the ReLU dies after 4 steps: its streak starts at the 9th backward
                with torch.no_grad():
                    critic[0].weight.fill_(-1.0)
                    critic[0].bias.fill_(-50.0)
            opt_g.zero_grad()
            critic(maker(torch.rand(8, 4))).mean().backward()
            opt_g.step()
            opt_d.zero_grad()
            critic(x).mean().backward()
            opt_d.step()
    report = seen.reports[0]
    assert report["qualname"].endswith("1") and report["module_type"] == "ReLU"
    # 6 of the discriminator's steps in a row (4-9), not 6 backwards (it had said 3 steps, 4-6)
    assert report["dead_since"] == 4 and report["step"] == 9 and report["step"] - report["dead_since"] + 1 == 6
    assert "dead_since_counts" not in report
    streak = report["step"] - report["dead_since"] + 1
    assert f"were 0 for {streak} steps in a row" in report["sentence"] and streak > 0


class NoConnection(nn.Module):
    """DARTS' "none" candidate: zeros of the input's shape, on purpose."""

    def forward(self, x):
        return x * 0.0


class DropPath(nn.Module):
    """Stochastic depth as in Swin/ConvNeXt: the whole residual branch of a sample dropped."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(1.0 - self.p)
        return x * mask / (1.0 - self.p)


class Mixed(nn.Module):
    """A model around one parameterless module whose output is zero at the steps asked for."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner, self.fc = inner, nn.Linear(16, 1)

    def forward(self, x):
        return self.fc(x + self.inner(x))


def _train(model: nn.Module, steps: int = 6) -> None:
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(1, 16)).pow(2).mean().backward()
        optimizer.step()


def test_a_users_module_that_outputs_zeros_by_design_is_not_dead():
    with watching(deadSteps=3) as seen:
        _train(Mixed(NoConnection()))
    assert seen.reports == []


def test_drop_path_dropping_a_batch_of_one_steps_in_a_row_is_not_dead():
    with watching(deadSteps=3) as seen:
        _train(Mixed(DropPath(0.999)))  # drops the one sample at (almost) every step
    assert seen.reports == []


def test_torch_layers_zeros_still_count_and_dropping_everything_is_dead():
    class Relu(nn.Module):  # torch's own ReLU inside: its zeros are evidence
        def __init__(self) -> None:
            super().__init__()
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(x.abs().neg())

    for inner, name in ((Relu(), "act"), (nn.Dropout(1.0), "inner")):
        with watching(deadSteps=3) as seen:
            _train(Mixed(inner))
        assert [r["kind"] for r in seen.reports] == ["dead_output"]
        assert seen.reports[0]["qualname"].endswith(name) and seen.reports[0]["evidence"] == "no_params"


def test_a_dead_relu_under_two_optimizers_stepping_in_turn_is_reported_once_a_step_after_dead_steps():
    """DARTS' bilevel loop: the architecture's optimizer and the weights' step in turn, each after
    its own backward through the model: two backwards an iteration."""
    torch.manual_seed(0)
    body = nn.Linear(8, 16)
    with torch.no_grad():
        body.bias.fill_(-100.0)  # every unit of the ReLU below is dead
    model = nn.Sequential(body, nn.ReLU(), nn.Linear(16, 3))
    gate = nn.Parameter(torch.zeros(3))
    w_opt, a_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.Adam([gate], lr=1e-3)
    with watching(deadSteps=3, mode="log", firstOnly=False) as seen:
        for _ in range(5):
            for opt in (a_opt, w_opt):
                opt.zero_grad()
                nn.functional.cross_entropy(model(torch.randn(16, 8)) + gate, torch.randint(0, 3, (16,))).backward()
                opt.step()
    streaks = [r["step"] - r["dead_since"] + 1 for r in seen.reports if r["kind"] == "dead_output"]
    assert streaks == [3, 4, 5]  # from 3 steps on, once per step (it said 2 steps, twice a step)


def test_an_optimizer_that_stopped_stepping_does_not_hide_a_dead_relu_for_ever():
    model = _dead_relu_mlp()
    x, y = data()
    with watching(deadSteps=3) as seen:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        optimizer.step()  # stepped once, then only backwards (a script that stopped updating)
        for _ in range(30):
            nn.functional.cross_entropy(model(x.abs()), y).backward()
    assert [r["kind"] for r in seen.reports] == ["dead_output"]
