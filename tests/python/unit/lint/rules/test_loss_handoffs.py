"""TD007 and a loss backpropagated by a helper it is handed (lint/rules/loss_handoffs.py): a
fine-tuning loop computes ``loss = net(x, labels=y).mean()`` (a model that returns its loss) and
calls ``apply_update(loss / accum, opt)``, whose ``loss.backward()`` makes it a loss. Feeding
the tensor to a summing meter keeps each batch's graph; feeding ``loss.item()`` is quiet, and a
helper that only logs what it gets makes nothing a loss."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch


class Mean:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def apply_update(part, opt, do_step=True):
    part.backward()
    if do_step:
        opt.step()
        opt.zero_grad()


def finetune(net, opt, loader, accum):
    meter = Mean()
    net.train()
    for i, batch in enumerate(loader):
        _, loss = net(batch["x"], labels=batch["y"])
        loss = loss.mean()
        meter.update({fed})
        apply_update(loss / accum, opt, do_step=(i + 1) % accum == 0)
    return meter.sum / meter.count
"""


def found(fed: str, text: str = SCRIPT):
    return [rule for rule, _ in hits(text.format(fed=fed)) if rule == "TD007"]


def test_a_loss_handed_to_a_backpropagating_helper_fed_to_a_meter_is_reported():
    assert found("loss") == ["TD007"]


def test_its_number_fed_to_the_meter_is_quiet():
    assert found("loss.item()") == []


def test_a_helper_that_does_not_backpropagate_makes_nothing_a_loss():
    logging_only = SCRIPT.replace("    part.backward()\n", "    print(float(part))\n")
    assert found("loss", logging_only) == []
