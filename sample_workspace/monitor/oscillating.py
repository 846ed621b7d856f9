"""Oscillating: a learning rate too high makes the loss bounce between two levels.

A line fit with an L1 loss and SGD at lr=2: every step overshoots the minimum, so the loss
alternates (about 1.6, 0.4, 1.6, 0.4...) and never settles.
What the view shows: a saw-tooth training loss with no net progress, update ratios far above
~1e-3, and an "oscillating" verdict card (lower the learning rate 3-10x), linked to the
``loss.backward()`` line, with an "update_ratio_high" card beside it.
`torchdoctor run --monitor oscillating.py` reports `oscillating` (a warning: exit 0).
"""

import torch
from torch import nn


def main(steps: int = 70) -> None:
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 256).unsqueeze(1)
    y = 3 * x + 0.5 + 0.05 * torch.randn_like(x)
    model = nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    criterion = nn.L1Loss()
    for step in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"last loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
