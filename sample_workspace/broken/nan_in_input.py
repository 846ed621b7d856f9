"""Bug: a NaN already in the input data (a missing value that became NaN when the table was
read), in the third batch.

Nothing in the model is wrong: the first layer just multiplies the NaN into every hidden unit
of that sample, and the loss is NaN from then on.

Torch Doctor stops in `forward`, on the line that calls the first layer, at step 2, and says the
NaN came in with the data:

    NaN in the output of `model.fc1` (Linear) at step 2: 32 of 2048 values; its inputs already had
    NaN (1 of 640 values), and no module before it made any: it came from outside the modules (the
    input data, or code between modules)
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))  # stopped here: the NaN arrives with x
        return self.fc2(h)


def load_table(n: int = 320):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 10, generator=g)
    y = (x[:, 0] > 0).long()
    x[150, 4] = float("nan")  # the bug: a missing value, row 150 (batch 2)
    return x, y


def train(epochs: int = 2, batch_size: int = 64) -> float:
    torch.manual_seed(0)
    x, y = load_table()
    model = MLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for epoch in range(epochs):
        for start in range(0, len(x), batch_size):
            optimizer.zero_grad()
            loss = criterion(model(x[start:start + batch_size]), y[start:start + batch_size])
            loss.backward()
            optimizer.step()
    print(f"final loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
