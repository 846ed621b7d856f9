"""TD013's forward pass under ``no_grad`` when the optimizer is a parameter (``no_grad_trained``,
2026-12-07, a fetched tutorial's ``train(net, train_data, ..., optimizer, criterion)``): the
model the function switches to training mode is the one it trains. A frozen backbone with a
head run with gradients, or a model never switched to training, is not guessed at."""

from __future__ import annotations

from support.lint import findings

TRAIN = """
import torch


def train(net, train_data, num_epochs, optimizer, criterion):
    for epoch in range(num_epochs):
        {switch}
        for im, label in train_data:
            with torch.no_grad():
                {forward}
            loss = criterion(output, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def td013(switch="net = net.train()", forward="output = net(im)"):
    return [(f.severity, f.message) for f in findings(TRAIN.format(switch=switch, forward=forward), "TD013")]


def test_the_model_switched_to_training_is_the_one_trained():
    [(severity, message)] = td013()
    assert severity == "error"
    assert "`net` is the model trained here" in message and "optimizer the file does not show" in message
    assert td013(switch="net.train(True)") != []


def test_no_switch_or_a_part_of_the_model_is_not_guessed_at():
    assert td013(switch="pass") == []  # which model the optimizer steps is unknown
    # a frozen backbone under no_grad, the head after it (with or without grad): the optimizer
    # it does not show may step the head alone
    inside = "feats = net.backbone(im)\n                output = net.head(feats)"
    after = "feats = net.backbone(im)\n            output = net.head(feats)"
    assert td013(forward=inside) == [] and td013(forward=after) == []
