"""TD020 and a training loop whose step is a function defined inside it (a self-supervised
trainer hands ``def step(): ... loss.backward() ...`` to a timer, with the target network's
update under ``no_grad`` inside it): that ``no_grad`` does not make the loop an evaluation, the
backward next to it says it trains. An evaluation written the same way is still reported."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Meter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value):
        self.sum += value
        self.count += 1


def timed(fn):
    return fn(), 0.0


images = TensorDataset(torch.randn(64, 8))
loader = DataLoader(images, batch_size=8, sampler=DistributedSampler(images))
online, target = nn.Linear(8, 8), nn.Linear(8, 8)
opt = torch.optim.AdamW(online.parameters())

for epoch in range(2):
    meter = Meter()
    for (batch,) in loader:

        def step():
            with torch.no_grad():
                goal = target(batch)
            loss = (online(batch) - goal).pow(2).mean()
{tail}
            return float(loss)

        value, took = timed(step)
        meter.update(value)
    print("epoch loss", meter.sum / meter.count)
"""

TRAINS = """\
            loss.backward()
            opt.step()
            opt.zero_grad()
            with torch.no_grad():
                for p, q in zip(online.parameters(), target.parameters()):
                    q.mul_(0.99).add_(0.01 * p)"""

EVALUATES = """\
            print("batch", batch.shape)"""


def test_a_loop_whose_nested_step_backpropagates_is_training():
    assert hits(SCRIPT.format(tail=TRAINS), "TD020") == []


def test_an_evaluation_with_a_nested_step_is_still_reported():
    assert [rule for rule, _ in hits(SCRIPT.format(tail=EVALUATES), "TD020")] == ["TD020"]
