"""Bug: log(0) in a hand-written binary cross-entropy.

The features are raw values up to 100 (never normalised) and the head is confident, so after
the first update two logits pass +17 and `torch.sigmoid` rounds them to exactly 1.0 in float32;
`torch.log(1 - p)` is then log(0) = -Inf, and `0 * -Inf` makes the loss NaN. No module does it:
every layer's output is finite. (`F.binary_cross_entropy_with_logits` on the logits is stable.)

Torch Doctor stops at the `loss.backward()` line of step 1 and names the operation:

    NaN loss at step 1; every module output was finite, so the loss computation made it:
    `log` of 2 zeros (LogBackward0)
"""

import torch
from torch import nn


def binary_cross_entropy(p: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()  # the bug: no clamp


def train(steps: int = 20) -> float:
    torch.manual_seed(0)
    x = 100 * torch.rand(128, 20)  # raw features, not normalised
    y = (x[:, 0] > 50).float().unsqueeze(1)
    model = nn.Sequential(nn.Linear(20, 16), nn.Tanh(), nn.Linear(16, 1))
    with torch.no_grad():
        model[2].weight.mul_(40)  # a confident head: logits far past +17 on some samples
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = torch.tensor(0.0)
    for step in range(steps):
        optimizer.zero_grad()
        p = torch.sigmoid(model(x))
        loss = binary_cross_entropy(p, y)
        loss.backward()  # stopped here: the loss is already NaN
        optimizer.step()
    print(f"final loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
