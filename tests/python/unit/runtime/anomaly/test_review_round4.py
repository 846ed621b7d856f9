"""Bugs the fourth round's loosenings (masks, data scale, sums, loss-module hinges) hid, found by
planting one bug a program and running it under the code before and after (review, 2026-12-07).
Each test fails with its fix off."""

from __future__ import annotations

import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.masks import masked_output
from torchdoctor.runtime.anomaly.sums import per_sample_sum


def _passes(t: torch.Tensor) -> bool:
    values = t.detach()
    return masked_output(t, float(values.min()), float(values.max()), 1e4)


def _audio_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv1d(1, 8, 9, stride=4), nn.ReLU(), nn.Conv1d(8, 8, 9, stride=4), nn.Flatten(), nn.LazyLinear(5)
    )


def test_a_model_fed_unnormalised_data_under_no_grad_is_exploding():
    # int16 samples, not divided by 32768: the model's own input is not a scale its layers may reach
    # (the data scale let every layer pass up to 3.3e5; the code before reported the first conv)
    torch.manual_seed(0)
    model = _audio_model()
    model(torch.zeros(2, 1, 200))
    with watching(mode="log") as seen:
        with torch.no_grad():
            pcm = torch.randint(-32768, 32767, (4, 1, 200)).float()
            model(pcm)
    assert seen.kinds[:1] == ["exploding_output"]
    assert seen.reports[0]["module_type"] == "Conv1d"


def test_unnormalised_inputs_in_training_name_the_first_layer():
    # raw pressure readings (1e5 Pa) into a classifier: reported at the first layer's output, not
    # later as the last layer's gradient
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    with watching(mode="log") as seen:
        for _ in range(2):
            x = 101325.0 + 500.0 * torch.randn(16, 6)
            y = torch.randint(0, 3, (16,))
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert seen.reports[0]["kind"] == "exploding_output"
    assert seen.reports[0]["qualname"] == "model.0"


def test_raw_targets_still_give_their_scale():
    # the data scale still comes from the loop's targets (the healthy raw-price regression)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    with torch.no_grad():
        model[2].bias.fill_(2e5)
    with watching(mode="log") as seen:
        with torch.no_grad():
            features = torch.randn(32, 5)
            price = 2e5 + 3e4 * features[:, :1]
            nn.functional.mse_loss(model(features), price)
    assert seen.reports == []


def test_a_masking_op_with_a_fill_computed_from_data_is_not_a_mask():
    h = torch.randn(8, 6, requires_grad=True) * 1.0
    missing = torch.zeros(8, 6, dtype=torch.bool)
    missing[:, 2] = True
    assert _passes(h.masked_fill(missing, -1e9))
    assert not _passes(h.masked_fill(missing, 167553.58))  # ``raw.sum()`` where a mean was meant
    top, idx = h.topk(2, -1)
    assert not _passes(torch.full_like(h, -12345.6).scatter(-1, idx, top))


def test_outputs_creeping_past_plus_1e4_without_a_graph_are_not_a_near_fill():
    scores = torch.tensor([1.0, -2.0, 10025.3, 10033.8])  # two scores of an evaluation, just past
    assert not _passes(scores)
    masked = torch.tensor([[1.0, -10000.7, -10001.9], [0.5, 2.0, -10000.2]])  # BERT's additive -1e4
    assert _passes(masked)


class RegressorWithLoss(nn.Module):
    """A model that computes its own loss: its class name ends in 'Loss', its ReLU is the model's."""

    def __init__(self) -> None:
        super().__init__()
        self.fc, self.relu, self.out = nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)
        with torch.no_grad():
            self.fc.bias.fill_(-100.0)  # the bug: every unit starts dead

    def forward(self, x, y):
        return nn.functional.mse_loss(self.out(self.relu(self.fc(x))), y)


def test_a_dead_relu_in_a_model_named_with_loss_is_still_reported():
    torch.manual_seed(0)
    model = RegressorWithLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watching(mode="log") as seen:
        for _ in range(6):
            x = torch.randn(16, 8)
            loss = model(x, x.sum(1, keepdim=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert "dead_output" in seen.kinds


def test_a_sum_of_terms_of_60_is_not_a_per_sample_sum():
    x = torch.randn(2, 768, requires_grad=True)
    assert per_sample_sum(x.abs().sum(-1), 768 * 1.5, 1e4)  # a likelihood's terms of a nat or two
    assert not per_sample_sum(x.abs().sum(-1), 768 * 60.0, 1e4)  # a collapsed flow's log-det: -60 a dimension
