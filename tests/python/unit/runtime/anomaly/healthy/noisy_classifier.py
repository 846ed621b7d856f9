"""Healthy: a classifier that fits its data to a loss near 1e-3, with 1% of the labels wrong.

Most batches are learned almost perfectly; a batch that holds a wrong label costs orders of
magnitude more than the median. That is what label noise looks like, not an oscillation.
"""

import torch
from torch import nn

torch.manual_seed(9)
n, features = 2048, 20
x_all = torch.randn(n, features)
y_all = (x_all[:, :3].sum(dim=1) > 0).long()
flip = torch.rand(n) < 0.01
y_all[flip] = 1 - y_all[flip]
model = nn.Sequential(nn.Linear(features, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
for _ in range(30):
    order = torch.randperm(n)
    for start in range(0, n, 64):
        batch = order[start : start + 64]
        loss = nn.functional.cross_entropy(model(x_all[batch]), y_all[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print(f"final loss {loss.item():.2e}")
