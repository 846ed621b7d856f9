"""Healthy: an embedding net trained with a triplet margin loss that reaches exactly 0 (2026-12-07).

Within a few steps every triplet of an easy batch satisfies the margin, so the loss is exactly 0
(and so are the gradients); a batch of hard negatives now and then gives a positive loss again.
Both medians of the loss curve are 0, and the watch advised "Loss not decreasing: the median of
the last 25 losses (0) is not below 99% of the median of the first 25 (0)": a loss at its floor.
"""

import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.TripletMarginLoss(margin=1.0)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
centres = torch.randn(4, 8)
for step in range(120):
    label = torch.randint(0, 4, (16,))
    other = (label + torch.randint(1, 4, (16,))) % 4
    anchor = centres[label] + 0.1 * torch.randn(16, 8)
    positive = centres[label] + 0.1 * torch.randn(16, 8)
    negative = centres[other] + 0.1 * torch.randn(16, 8)
    if step % 37 == 36:  # hard negatives, mined next to the anchors
        negative = anchor + 0.05 * torch.randn(16, 8)
    loss = criterion(net(anchor), net(positive), net(negative))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3f}")
