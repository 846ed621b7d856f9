"""Bug: the learning rate is far too high (SGD, lr=0.4 on this regression; 0.05 trains well).

The loss grows step after step (for example 9.7, 5.4, 4.0, 50, 263, 6639, 3e9...), overflows to Inf at
step 8 and is NaN from step 9 on; nothing crashes.

Torch Doctor stops long before the NaN, at the `loss.backward()` line of step 5; for example
(the digits differ a little from CPU to CPU; the spike is about 70 times past the threshold):

    Loss spike at step 5: 6639 is 684x the median 9.71 of the last 5 losses (threshold 10x);
    a learning rate too high is the usual cause

Try it: `torchdoctor run broken/lr_too_high.py`, or debug it with the watch on.
"""

import torch
from torch import nn


def make_data(n: int = 256, features: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = x @ torch.randn(features, 1, generator=g) + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def train(steps: int = 30, lr: float = 0.4) -> float:
    torch.manual_seed(0)
    x, y = make_data()
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)  # the bug: ~10x too high
    loss = torch.tensor(0.0)
    for step in range(steps):
        optimizer.zero_grad()
        prediction = model(x)
        loss = nn.functional.mse_loss(prediction, y)
        loss.backward()  # stopped here: the loss spiked
        optimizer.step()
    print(f"final loss {loss.item():.4g}")
    return loss.item()


if __name__ == "__main__":
    train()
