"""TD007 and a loss known by the name it is copied into: an LSTM language model's loop computes
``raw = criterion(...)`` with a criterion of its own, copies it (``loss = raw``), adds activation
penalties and calls ``loss.backward()``. ``raw`` is a loss, so ``total += raw`` keeps each
batch's graph; ``total += raw.item()`` (or ``.data``, or ``.detach()``) does not."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn


class SampledSoftmaxLoss(nn.Module):
    def forward(self, weight, hidden, targets):
        return nn.functional.cross_entropy(hidden @ weight.t(), targets)


def train_epoch(model, batches, optimizer, alpha):
    criterion = SampledSoftmaxLoss()
    total = 0
    for i, (data, targets) in enumerate(batches):
        optimizer.zero_grad()
        output, states = model(data)
        raw = criterion(model.decoder.weight, output, targets)
        loss = raw
        if alpha:
            loss = loss + alpha * states.pow(2).mean()
        loss.backward()
        optimizer.step()
        total += {added}
        if i % 100 == 0:
            print(total / 100)
            total = 0
"""


def td007(added: str):
    return hits(SCRIPT.format(added=added), "TD007")


def test_a_loss_copied_into_the_backpropagated_name_is_a_loss():
    assert td007("raw") == [("TD007", 22)]


def test_the_number_or_the_detached_tensor_is_fine():
    assert td007("raw.item()") == []
    assert td007("raw.data") == []
    assert td007("raw.detach()") == []
