"""Flat: a learning rate far too low (SGD at 1e-6), so nothing is learnt.

What the view shows: training and validation losses that stay where they started, a tiny
update ratio (~1e-7, far below ~1e-3), and three verdict cards: "not_decreasing" (seed 002's
rule), "underfitting" (both losses high and flat) and "update_ratio_low" (raise the learning
rate), each linked to its line.
`torchdoctor run --monitor flat.py` reports them (warnings: exit 0; `--fail-on warning` exits 1).
"""

import torch
from torch import nn


def main(steps: int = 80) -> None:
    torch.manual_seed(0)
    w = torch.randn(16, 3)
    x_train = torch.randn(512, 16)
    y_train = (x_train @ w).argmax(1)
    x_val = torch.randn(128, 16)
    y_val = (x_val @ w).argmax(1)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    criterion = nn.CrossEntropyLoss()
    for step in range(1, steps + 1):
        i = (step * 64) % 512
        optimizer.zero_grad()
        loss = criterion(model(x_train[i : i + 64]), y_train[i : i + 64])
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            with torch.no_grad():
                val_loss = criterion(model(x_val), y_val)
            print(f"step {step}: train {loss.item():.4f} val {val_loss.item():.4f}")


if __name__ == "__main__":
    main()
