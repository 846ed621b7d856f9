"""Healthy: a ``torch.compile``d classifier whose loss falls from about 0.69 to below 0.1."""

import torch
from torch import nn

torch.manual_seed(7)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
compiled = torch.compile(model)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
direction = torch.randn(16)
for _ in range(200):
    x = torch.randn(64, 16)
    y = (x @ direction > 0).long()
    loss = nn.functional.cross_entropy(compiled(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
assert loss.item() < 0.2
