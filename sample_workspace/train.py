"""A small, healthy training script: Torch Doctor should find nothing wrong here.

Run it under the debugger with the "Debug training script" configuration, or lint it
with `torchdoctor lint train.py`.
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, in_features: int = 20, hidden: int = 64, classes: int = 4):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def make_data(n: int = 512, in_features: int = 20, classes: int = 4, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, in_features, generator=g)
    w = torch.randn(in_features, classes, generator=g)
    y = (x @ w).argmax(dim=1)
    return x, y


def train(epochs: int = 5, batch_size: int = 64) -> float:
    torch.manual_seed(0)
    x, y = make_data()
    model = MLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    loss_value = float("nan")
    for epoch in range(epochs):
        model.train()
        for start in range(0, len(x), batch_size):
            inputs, targets = x[start:start + batch_size], y[start:start + batch_size]
            optimizer.zero_grad()
            logits = model(inputs)
            loss = criterion(logits, targets)
            loss.backward()
            optimizer.step()
            loss_value = loss.item()
        print(f"epoch {epoch}: loss {loss_value:.4f}")
    return loss_value


if __name__ == "__main__":
    train()
