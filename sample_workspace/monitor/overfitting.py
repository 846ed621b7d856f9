"""Overfitting: a big network memorises 64 training examples whose labels carry no signal.

What the view shows: the training loss falling towards 0 while the validation loss (a point
every 10 steps) turns up after its first few evaluations and keeps rising; an "overfitting"
verdict card that names the best evaluation as the early-stopping point, linked to the line
that computes the validation loss.
`torchdoctor run --monitor overfitting.py` reports `overfitting` (a warning: exit 0).
"""

import torch
import torch.nn.functional as F
from torch import nn


def main(steps: int = 150) -> None:
    torch.manual_seed(0)
    x_train, y_train = torch.randn(64, 20), torch.randint(0, 4, (64,))
    x_val, y_val = torch.randn(256, 20), torch.randint(0, 4, (256,))
    model = nn.Sequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(1, steps + 1):
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x_train), y_train)
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            model.eval()
            with torch.no_grad():
                val_loss = F.cross_entropy(model(x_val), y_val)
            print(f"step {step}: train {loss.item():.3f} val {val_loss.item():.3f}")


if __name__ == "__main__":
    main()
