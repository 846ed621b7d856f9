"""Shapes of correct programs found reported (or crashing the watch) on 2026-12-06, and the bugs of
the same shapes that must still be caught: per-sample gradients under ``torch.func.vmap``, the
nested tensors of ``nn.TransformerEncoder``'s fast path, a policy whose illegal actions' logits
are -Inf, and a policy-gradient loss that moves around 0."""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from support.anomaly import watching
from torchdoctor.runtime.anomaly.loss_health import LossHealth
from torchdoctor.runtime.anomaly.masks import masked_logits


def _masked(t: torch.Tensor) -> bool:
    values = t.detach()
    finite = values[torch.isfinite(values)]
    low = float(values.min()) if not torch.isnan(values).any() else float("nan")
    return masked_logits(t, low, float(finite.max()) if finite.numel() else float("-inf"))


def test_logits_masked_with_minus_inf_are_told_from_a_log_of_zeros():
    w = torch.randn(4, 6, requires_grad=True)
    legal = torch.ones(4, 6, dtype=torch.bool)
    legal[:, 2:4] = False
    assert _masked(w.masked_fill(~legal, float("-inf")))
    assert _masked(torch.where(legal, w, torch.tensor(float("-inf"))))
    assert not _masked(torch.log(w.detach().clamp(min=0) * 0 + legal.float() * w.sigmoid()))  # log of zeros
    with torch.no_grad():  # no graph: nothing proves a mask
        assert not _masked(w.masked_fill(~legal, float("-inf")))
    legal[1] = False  # a row with no legal action: its softmax is NaN
    assert not _masked(w.masked_fill(~legal, float("-inf")))


def test_a_masked_policy_is_silent_and_a_state_with_no_legal_action_is_named():
    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Linear(5, 4)

        def forward(self, obs, legal):
            return self.body(obs).masked_fill(~legal, float("-inf"))

    torch.manual_seed(0)
    policy = Policy()
    legal = torch.tensor([[True, False, True, False]] * 3)
    with watching() as seen:
        dist = torch.distributions.Categorical(logits=policy(torch.randn(3, 5), legal))
        (-dist.log_prob(torch.zeros(3, dtype=torch.long)).mean()).backward()
        assert seen.reports == []
        legal[2] = False
        policy(torch.randn(3, 5), legal)
    assert seen.kinds == ["nonfinite_output"]
    assert seen.reports[0]["qualname"] == "policy" and seen.reports[0]["module_type"] == "Policy"


def test_per_sample_gradients_under_vmap_are_not_a_failure_of_the_watch():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_one(p, x, y):
        out = functional_call(model, p, (x.unsqueeze(0),))
        return nn.functional.cross_entropy(out, y.unsqueeze(0))

    with watching() as seen:
        grads = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, torch.randn(5, 6), torch.randint(0, 3, (5,)))
    assert grads["0.weight"].shape == (5, 8, 6)
    assert seen.watch is not None and seen.watch.errors == []
    assert seen.reports == []


def test_a_nan_under_grad_alone_is_still_reported():
    class Bad(nn.Module):
        def forward(self, x):
            return torch.log(x - x)

    model = nn.Sequential(nn.Linear(3, 3), Bad())
    params = dict(model.named_parameters())
    with watching(mode="log") as seen:
        grad(lambda p, x: functional_call(model, p, (x,)).sum())(params, torch.randn(2, 3))
    assert seen.kinds[:1] == ["nonfinite_output"]
    assert seen.watch is not None and seen.watch.errors == []


def test_the_encoder_fast_path_in_evaluation_is_not_a_failure_of_the_watch():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2).eval()
    pad = torch.zeros(3, 5, dtype=torch.bool)
    pad[1, 3:] = True
    with watching() as seen, torch.no_grad():
        out = encoder(torch.randn(3, 5, 8), src_key_padding_mask=pad)
    assert out.shape == (3, 5, 8)
    assert seen.watch is not None and seen.watch.errors == []
    assert seen.reports == []


def _series(values):
    health = LossHealth(spike_factor=10.0)
    return [f["rule"] for v in values for f in health.observe(v)]


def test_a_loss_that_moves_around_zero_has_no_spike():
    # a policy gradient's -(log p x advantage): 0.02 then 0.39 is noise, not a 20x spike
    noisy = [0.3, -0.2, 0.5, -0.4, 0.1, 0.02, -0.01, 0.03, 0.01, -0.02, 0.02, 0.39]
    assert "spike" not in _series(noisy)
    falling = [2.0, 1.9, 1.8, 1.7, 1.6, 0.05, 0.04, 0.05, 0.04, 0.05, 0.04, 30.0]
    assert _series(falling) == ["spike"]  # a positive loss still spikes


def _td_loop(target_net: bool):
    """A regression whose loss jumps 30x at step 12, its targets read from ``target`` when there
    is one (a DQN right after its target network was synced)."""
    torch.manual_seed(0)
    q = nn.Linear(4, 2)
    target = copy.deepcopy(q) if target_net else nn.Linear(4, 3)  # of another shape: a teacher
    optimizer = torch.optim.SGD(q.parameters(), lr=0.05)
    x = torch.randn(32, 4)
    with watching() as seen:
        for step in range(16):
            with torch.no_grad():
                y = x @ torch.ones(4, 2) + (30.0 if step == 12 else 0.0) + 0 * target(x).sum()
            loss = nn.functional.mse_loss(q(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return [r for r in seen.reports if r["kind"] == "loss_spike"]


def test_a_spike_beside_a_target_network_is_advice_and_names_it():
    [report] = _td_loop(target_net=True)[:1]
    assert report["advice"] is True and report.get("lagging_copy") is True
    assert "lagging copy of the model" in report["sentence"]


def test_a_spike_beside_a_model_of_another_shape_is_still_an_anomaly():
    [report] = _td_loop(target_net=False)[:1]
    assert report["advice"] is False and "lagging_copy" not in report
