"""Bug: `optimizer.zero_grad()` is missing (seed 002's broken network 3).

`loss.backward()` adds to `.grad`; without `zero_grad()` every step applies the sum of all the
gradients so far, so the updates grow and the loss wanders. Nothing crashes.

Torch Doctor stops at the `optimizer.step()` line of step 1, the first step that applies
gradients an earlier step already applied:

    Gradients not zeroed: `optimizer.step()` at step 1 applies gradients that still hold those
    of the step before (4 parameters, e.g. `model.fc1.weight`); call `optimizer.zero_grad()`
    every step before `loss.backward()`

(Accumulating gradients over several backward() calls before one step is fine and not reported.)
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def train(steps: int = 50) -> float:
    torch.manual_seed(42)
    x = torch.randn(64, 10)
    y = (x[:, 0] > 0).long()
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for step in range(steps):
        # the bug: no optimizer.zero_grad() here
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()  # stopped here at step 1
    print(f"final loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
