"""Healthy: raw gradients far above the watch's threshold, clipped by the script every step.

A regression onto targets in the thousands with a summed squared error gives raw gradient
norms in the tens of thousands; ``clip_grad_norm_`` brings them to 1 before every step (and a
second model uses ``clip_grad_value_``). The optimizer only ever applies clipped gradients.
"""

import torch
from torch import nn

torch.manual_seed(6)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
weights = torch.randn(8, 1) * 1000
for _ in range(40):
    x = torch.randn(32, 8)
    loss = ((model(x) - x @ weights) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    raw = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
assert raw > 1e4, f"the raw norms should be huge, got {raw:.0f}"

other = nn.Linear(8, 1)
optimizer = torch.optim.SGD(other.parameters(), lr=1e-3)
for _ in range(20):
    x = torch.randn(32, 8)
    loss = ((other(x) - x @ weights) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(other.parameters(), clip_value=5.0)
    optimizer.step()
print(f"raw norm {raw:.3g}")
