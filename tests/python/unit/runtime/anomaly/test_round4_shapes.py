"""Correct programs of a fourth round of shapes that the watch reported (2026-12-07), each beside the
bug of the same shape, still reported: a top-k router's gates scattered into ``-inf``, a triplet
loss that reaches exactly 0, a regression fitting raw targets of 2e5."""

from __future__ import annotations

import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.loss_health import LossHealth
from torchdoctor.runtime.anomaly.masks import masked_output


def _passes(t: torch.Tensor) -> bool:
    values = t.detach()
    return masked_output(t, float(values.min()), float(values.max()), 1e4)


class Router(nn.Module):
    """A top-2 mixture-of-experts router: its gate logits outside the top k are ``-inf``."""

    def __init__(self, log_gates: bool = False) -> None:
        super().__init__()
        self.gate = nn.Linear(8, 4)
        self.log_gates = log_gates

    def forward(self, x):
        logits = self.gate(x)
        top, idx = logits.topk(2, -1)
        if self.log_gates:  # the bug: the log of gates that underflow to 0 writes -inf among the kept
            top = torch.log(torch.softmax(top * 1e3, -1))
        return torch.full_like(logits, float("-inf")).scatter(-1, idx, top)


def _train_router(router: Router) -> None:
    torch.manual_seed(0)
    head = nn.Linear(8, 1)
    optimizer = torch.optim.SGD([*router.parameters(), *head.parameters()], lr=0.1)
    for _ in range(3):
        x = torch.randn(16, 8)
        gates = torch.softmax(router(x), -1)
        loss = (head(x) * gates.sum(-1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_top_k_gates_scattered_into_minus_inf_are_silent():
    torch.manual_seed(0)
    with watching() as seen:
        _train_router(Router())
    assert seen.reports == []  # was: "Inf in the output of `Router` at step 0: 32 of 64 values"


def test_a_minus_inf_among_the_scattered_values_is_still_reported():
    torch.manual_seed(0)
    with watching(mode="log") as seen:
        _train_router(Router(log_gates=True))
    assert "nonfinite_output" in seen.kinds


def test_what_a_scatter_proves_and_what_it_does_not():
    torch.manual_seed(0)
    w = torch.randn(4, 6, requires_grad=True)
    top, idx = (w * 1.0).topk(2, -1)
    assert _passes(torch.full_like(w, -1e9).scatter(-1, idx, top))
    assert _passes(torch.full_like(w, float("-inf")).scatter(1, idx, top))
    assert _passes((w * 1.0).scatter(-1, idx, float("-inf")))  # a fill written at the indices
    partly = torch.zeros(4, 6)
    partly[0, 5] = float("-inf")  # a base that is not one fill: its -inf came from somewhere else
    assert not _passes(partly.scatter(-1, idx, top))
    based = torch.log(torch.softmax(w * 1e3, -1))  # the base has a graph: its -inf is a log of zeros
    assert not _passes(based.scatter(-1, idx, top))
    bad = (w * 1.0).clone()
    bad = bad + torch.where(torch.arange(6) == 0, float("-inf"), 0.0)
    assert not _passes(bad.scatter(-1, torch.full((4, 1), 3), 0.0))  # the -inf is where no scatter wrote


def test_a_margin_loss_at_its_floor_is_not_advised_and_a_loss_zero_from_the_start_is():
    solved = LossHealth()
    findings = [f for value in [0.7, 0.3, 0.05] + [0.0] * 80 for f in solved.observe(value)]
    assert findings == []  # was: "the median of the last 25 losses (0) is not below ... (0)"
    never = LossHealth()
    findings = [f for _ in range(80) for f in never.observe(0.0)]  # mse_loss(out, out): nothing learns
    assert [f["rule"] for f in findings] == ["notDecreasing"]
    signed = LossHealth()  # a loss that moves around 0 is not at a floor
    cycle = [0.0, 0.0, -0.05, 0.0, 0.05]  # median 0, but it goes below 0
    findings = [f for i in range(80) for f in signed.observe(cycle[i % 5])]
    assert "notDecreasing" in [f["rule"] for f in findings]


def _fit_prices(lr: float, steps: int = 30) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    weights = torch.tensor([[3e4], [2e4], [-1e4]])
    for _ in range(steps):
        x = torch.randn(32, 3)
        price = x @ weights + 2e5  # dollars, not normalised
        loss = nn.functional.l1_loss(model(x), price)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_a_regression_on_raw_targets_is_silent_and_an_overshoot_past_them_is_reported():
    with watching() as seen:
        _fit_prices(lr=100.0, steps=60)  # predictions reach the 2e5 of the targets: their scale, not an explosion
    assert seen.reports == []  # was: "Exploding values in the output of `model.2` (Linear)"
    with watching(mode="log") as seen:
        _fit_prices(lr=3e4, steps=3)  # too high: predictions of 1e9 and more
    assert "exploding_output" in seen.kinds


class HingeLoss(nn.Module):
    """A hinge-GAN discriminator loss written as a module with an ``nn.ReLU``."""

    def __init__(self) -> None:
        super().__init__()
        self.relu = nn.ReLU()

    def forward(self, real, fake):
        return self.relu(1.0 - real).mean() + self.relu(1.0 + fake).mean()


class Critic(nn.Module):
    """The same ReLU inside a model: its zeros are a dead unit."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(1.0 - self.fc(x))


def _confident_critic(model: nn.Module, loss_of) -> None:
    torch.manual_seed(0)
    linear = model.fc if isinstance(model, Critic) else model
    with torch.no_grad():
        linear.weight.fill_(1.0)
        linear.bias.fill_(0.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(6):
        real = torch.full((16, 2), 3.0) + 0.1 * torch.randn(16, 2)  # scored far above the margin
        loss = loss_of(model, real)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_a_hinge_written_as_a_loss_module_is_not_dead_and_a_dead_relu_in_a_model_is():
    hinge = HingeLoss()
    with watching() as seen:
        _confident_critic(nn.Linear(2, 1), lambda d, real: hinge(d(real), d(-real)))
    assert seen.reports == []  # was: "Dead output: all 16 values of `hinge.relu` (ReLU) were 0 for 3 steps"
    with watching(mode="log") as seen:
        _confident_critic(Critic(), lambda critic, real: critic(real).mean() + (critic.fc.weight**2).sum())
    assert "dead_output" in seen.kinds


class PerceptualLoss(nn.Module):
    """A frozen feature network inside a loss: its layers are not the loss's hinge."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, 4), nn.ReLU())
        with torch.no_grad():
            self.features[0].weight.fill_(-1.0)
            self.features[0].bias.fill_(-1.0)
        self.features.requires_grad_(False)

    def forward(self, a, b):
        return (self.features(a) - self.features(b)).pow(2).mean() + (a - b).pow(2).mean()


def test_a_dead_unit_of_a_network_inside_a_loss_is_still_reported():
    torch.manual_seed(0)
    model, loss_fn = nn.Linear(2, 2), PerceptualLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    with watching(mode="log") as seen:
        for _ in range(5):
            x = torch.rand(8, 2) + 1.0  # positive inputs: the feature ReLU sees only negatives
            loss = loss_fn(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert "dead_output" in seen.kinds


class Likelihood(nn.Module):
    """A flow's head: each sample's log-likelihood in nats, summed over every pixel, and a log-det
    that adds up one sum per layer."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.scale = scale

    def forward(self, x):
        z = self.conv(x) * self.scale
        log_p = (-0.5 * z.pow(2) - 0.919).flatten(1).sum(1)
        logdet = torch.zeros(x.size(0)) + z.abs().add(1e-3).log().flatten(1).sum(1) + z.tanh().sum((1, 2, 3))
        return log_p, logdet


def _fit_flow(head: Likelihood) -> None:
    torch.manual_seed(0)
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    for _ in range(2):
        log_p, logdet = head(torch.rand(2, 3, 64, 64) - 0.5)  # 12288 values a sample
        loss = -(log_p + logdet).mean() / 12288
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_a_flows_per_sample_log_likelihood_is_silent_and_huge_terms_are_still_reported():
    with watching() as seen:
        _fit_flow(Likelihood())
    assert seen.reports == []  # was: "Exploding values in the output of `head` (Likelihood) at step 0: max |x| = 11946"
    with watching(mode="log") as seen:
        _fit_flow(Likelihood(scale=1e3))  # each term is huge: z itself exploded
    assert "exploding_output" in seen.kinds


def test_what_a_sum_proves():
    from torchdoctor.runtime.anomaly.sums import per_sample_sum

    x = torch.randn(2, 4096, requires_grad=True)
    total = (x * 1.0).abs().sum(1) * 1.0
    assert not per_sample_sum(total, float(total.detach().max()), 1e4)  # a product after the sum: no proof
    assert per_sample_sum(x.abs().sum(-1) + 5, 5e3, 1e4)  # a constant added: an operand with no graph
    assert not per_sample_sum(x.abs().sum(-1), 5e6, 1e4)  # terms of 1e3 on average: too large


class LogPointer(nn.Module):
    """A pointer network's head returning log-probabilities over the cities not visited yet."""

    def __init__(self, through_log: bool = False) -> None:
        super().__init__()
        self.score = nn.Linear(8, 1)
        self.through_log = through_log

    def forward(self, cities, visited):
        scores = self.score(cities).squeeze(-1).masked_fill(visited, float("-inf"))
        if self.through_log:  # the bug: log of a softmax's exact zeros (its gradient is NaN there)
            return torch.log(torch.softmax(scores, -1))
        return torch.log_softmax(scores, -1)


def _tour(head: LogPointer, visited: torch.Tensor) -> None:
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    cities = torch.randn(4, 5, 8)
    for _ in range(3):
        loss = -head(cities, visited)[:, 3].mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_log_softmax_of_masked_scores_is_silent_and_the_bugs_beside_it_are_reported():
    visited = torch.zeros(4, 5, dtype=torch.bool)
    visited[:, :2] = True
    with watching() as seen:
        _tour(LogPointer(), visited)
    assert seen.reports == []  # was: "Inf in the output of `head` (LogPointer) at step 0: 8 of 20 values"
    with watching(mode="log") as seen:
        _tour(LogPointer(through_log=True), visited)
    assert "nonfinite_output" in seen.kinds
    torch.manual_seed(0)
    w = torch.randn(2, 5, requires_grad=True)
    scores = torch.log(torch.relu(w))  # -inf from a log of zeros, then one more place masked
    logp = torch.log_softmax(scores.masked_fill(torch.eye(2, 5, dtype=torch.bool), float("-inf")), -1)
    assert not masked_output(logp, float("-inf"), 0.0, 1e4)


class Amplify(torch.autograd.Function):
    """A custom backward that multiplies its gradient: an explosion the loss's units do not explain."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * 1e12


def _fit_prices_mse(optimizer_of, steps: int, amplify: bool = False) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = optimizer_of(model.parameters())
    weights = torch.tensor([[3e4], [2e4], [-1e4]])
    for _ in range(steps):
        x = torch.randn(32, 3)
        price = x @ weights + 2e5
        hidden = model[1](model[0](x))
        loss = nn.functional.mse_loss(model[2](Amplify.apply(hidden) if amplify else hidden), price)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_gradients_of_a_loss_in_dollars_squared_are_silent_and_explosions_past_its_units_are_not():
    with watching() as seen:  # the loss starts near 4e10, its gradients near 4e5: Adam does not mind
        _fit_prices_mse(lambda params: torch.optim.Adam(params, lr=100.0), steps=60)
    assert (
        seen.reports == []
    )  # was: "Exploding gradient of `Linear.bias` (Linear `Linear`) at step 0: max |g| = 3.77e5"
    with watching(mode="log") as seen:  # SGD at a rate the units make far too high: it diverges
        _fit_prices_mse(lambda params: torch.optim.SGD(params, lr=1e-3), steps=4)
    assert {"exploding_grad", "exploding_output"} & set(seen.kinds)
    with watching(mode="log") as seen:  # a backward that multiplies by 1e12: past every loss
        _fit_prices_mse(lambda params: torch.optim.Adam(params, lr=1.0), steps=2, amplify=True)
    assert "exploding_grad" in seen.kinds


def test_a_flow_evaluated_under_no_grad_after_training_is_silent_and_a_blown_up_one_is_not():
    head = Likelihood()
    with watching(mode="log") as seen:
        _fit_flow(head)
        head.eval()
        with torch.no_grad():  # the test set's log-likelihood: the same sums, no graph
            head(torch.rand(2, 3, 64, 64) - 0.5)
        assert seen.reports == []
        with torch.no_grad():
            head.scale = 1e3  # terms a million times larger: past what training proved
            head(torch.rand(2, 3, 64, 64) - 0.5)
    assert seen.kinds == ["exploding_output"]


class Scorer(nn.Module):
    """Attention scores with BERT's additive mask: ``-10000.0`` added to the padded keys' scores."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.k = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x, keep):
        scores = self.q(x) @ self.k(x).transpose(1, 2) / 8**0.5
        return scores + (1.0 - keep[:, None, :]) * -10000.0


def test_an_additive_minus_ten_thousand_mask_is_silent_and_a_row_with_every_key_masked_is_not():
    torch.manual_seed(0)
    scorer = Scorer()
    optimizer = torch.optim.SGD(scorer.parameters(), lr=0.1)
    x, keep = torch.randn(2, 5, 8), torch.ones(2, 5)
    keep[:, 3:] = 0.0  # two padded keys
    with watching(mode="log") as seen:
        for _ in range(2):
            loss = (torch.softmax(scorer(x, keep), -1) @ x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert seen.reports == []  # was: "Exploding values in the output of `scorer` (Scorer) ... max |x| = 10000"
        keep[1] = 0.0  # a sequence with no key left
        scorer(x, keep)
    assert seen.kinds == ["exploding_output"]


def test_values_spread_around_a_round_number_are_not_a_fill():
    torch.manual_seed(0)
    w = torch.randn(4, 6, requires_grad=True)
    legal = torch.ones(4, 6, dtype=torch.bool)
    legal[:, :2] = False
    assert _passes(w * 1.0 + (~legal).float() * -1e4)
    assert not _passes(w * 400.0 + (~legal).float() * -1e4)  # masked scores of 400: 4% of the fill
    assert not _passes(w * 1.0 + (~legal).float() * -1.2345e4)  # not a fill anyone writes
    spread = torch.where(legal, w * 1.0, torch.full_like(w, -1e4) - torch.rand(4, 6) - 1.0)
    assert not _passes(spread)  # a masking op writes its fill exactly: one value or nothing
