"""Bug: dead ReLUs from a bad initialisation (seed 002's broken network 2).

Every weight is set to -1 and every bias to -5: the second hidden layer's pre-activations are
negative for every sample, so its ReLU outputs only zeros. No gradient flows back through it;
the loss sits at ln 2 and barely moves. Nothing crashes.

Torch Doctor stops in `forward`, on the line that calls the dead ReLU, at step 2 (the third
step in a row with only zeros):

    Dead output: all 2048 values of `model.act2` (ReLU) were 0 for 3 steps in a row (steps 0-2)
    while its inputs were not (inputs in [-86.1, -5]); nothing flows past it, forward or backward

(`act1` is not dead: about 6% of its inputs are positive.)
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.act1 = nn.Linear(10, 32), nn.ReLU()
        self.fc2, self.act2 = nn.Linear(32, 32), nn.ReLU()
        self.out = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act1(self.fc1(x))
        h = self.act2(self.fc2(h))  # stopped here: the dead ReLU
        return self.out(h)


def bad_init(model: nn.Module) -> None:
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                m.weight.fill_(-1.0)  # the bug
                m.bias.fill_(-5.0)


def train(steps: int = 50) -> float:
    torch.manual_seed(42)
    x = torch.randn(64, 10)
    y = (x[:, 0] > 0).long()
    model = MLP()
    bad_init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for step in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"final loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
