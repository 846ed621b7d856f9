# expect: TD001@18
"""Seed 002's "BUG 3": the loop steps and backpropagates but never clears gradients."""

import torch
import torch.nn as nn

torch.manual_seed(42)
x = torch.randn(64, 10)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()

for step in range(50):
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(step, loss.item())
