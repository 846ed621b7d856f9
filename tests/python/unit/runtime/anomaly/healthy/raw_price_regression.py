"""Healthy: a regression fitted to raw prices in dollars (about 2e5), not normalised, MSE and Adam (2026-12-07).

The last layer's predictions must reach the targets' scale, far past the watch's threshold of 1e4,
and the mean squared error is in dollars squared (4e10 at the start), so its gradients reach 4e5
and more; Adam's steps do not depend on the gradients' scale, and the error falls to about 2000
dollars. The watch stopped the run at step 0 ("Exploding gradient of `model.2.bias` (Linear
`model.2`) at step 0: max |g| = 4.04e5"), and without that, at step 1 ("Exploding values in the
output of `model.2` (Linear) at step 1: max |x| = 5.18e5").
"""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=100.0)
weights = torch.tensor([[30000.0], [20000.0], [-10000.0], [5000.0], [15000.0]])
for _ in range(150):
    features = torch.randn(32, 5)
    price = features @ weights + 200000.0
    loss = nn.functional.mse_loss(model(features), price)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"root mean squared error {loss.item() ** 0.5:.0f} dollars")
