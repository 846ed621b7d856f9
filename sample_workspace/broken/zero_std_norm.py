"""Bug: division by a zero standard deviation in a hand-written normalisation layer.

`Standardize` divides by the batch's per-feature std with no epsilon. Feature 7 is a constant
flag (always 1.0): its std is 0, so (x - mean) / std is 0 / 0 = NaN for that whole column, at
the first step. The NaN then spreads through every layer and the loss.

Torch Doctor stops in `forward`, on the line that calls the layer that made the NaN:

    NaN in the output of `model.norm` (Standardize) at step 0: 64 of 768 values; its inputs
    were finite
"""

import torch
from torch import nn


class Standardize(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=0, keepdim=True)
        std = x.std(dim=0, keepdim=True)
        return (x - mean) / std  # the bug: no epsilon


class Classifier(nn.Module):
    def __init__(self, features: int = 12, classes: int = 3) -> None:
        super().__init__()
        self.norm = Standardize()
        self.body = nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(x)  # stopped here
        return self.body(x)


def train(steps: int = 20) -> float:
    torch.manual_seed(0)
    x = torch.randn(64, 12)
    x[:, 7] = 1.0  # a constant flag column
    y = torch.randint(0, 3, (64,))
    model = Classifier()
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
