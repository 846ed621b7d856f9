"""Leaking: the script keeps a loss tensor every step, and with it that step's autograd graph (TD007).

``held_out.append(loss)`` instead of ``held_out.append(loss.item())``: a loss computed for a
plot, never backpropagated, keeps every activation its graph saved (~1 MiB a step here).
What the view shows: process memory (RSS) climbing in a straight line while the loss curve looks
fine, and a "memory_growth" verdict card that names the growth per step and the list that holds
the tensors (`losses`).
`torchdoctor run --monitor leaking.py` reports `memory_growth` (a warning: exit 0).
"""

import torch
from torch import nn


def main(steps: int = 130) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x_hold = torch.randn(256, 64)
    held_out = []
    for step in range(steps):
        x = torch.randn(256, 64)
        optimizer.zero_grad()
        loss = (model(x) - x[:, :1]).pow(2).mean()
        loss.backward()
        optimizer.step()
        held_out.append((model(x_hold) - x_hold[:, :1]).pow(2).mean())  # the bug: keep .item()
    print(f"last held-out loss {held_out[-1].item():.3f}")


if __name__ == "__main__":
    main()
