"""Healthy: a mini-batch regression loss falling from about 300 to about 5, with heavy noise.

Small batches of a target with a noise floor: consecutive losses jump up and down by a large
fraction of their level while the smoothed curve falls steadily.
"""

import torch
from torch import nn

torch.manual_seed(8)
model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=2e-3)
weights = torch.tensor([[6.0], [-5.0], [7.0], [4.0]])
losses = []
for _ in range(300):
    x = torch.randn(8, 4)
    y = x @ weights + 10 + 2.2 * torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
first, last = sum(losses[:10]) / 10, sum(losses[-50:]) / 50
print(f"loss {first:.0f} -> {last:.1f}")
assert first > 100 and last < 15
