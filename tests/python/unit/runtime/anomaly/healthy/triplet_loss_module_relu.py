"""Healthy: a triplet loss written as a module with an ``nn.ReLU`` hinge, whose margin holds (2026-12-07).

Many metric-learning repositories write the hinge of their triplet or contrastive loss with an
``nn.ReLU`` child (``self.relu(d_pos - d_neg + margin)``). Once every triplet of a batch keeps the
margin, that ReLU's whole output is 0 while its input is not, step after step: the loss is at its
floor. The watch called it a dead ReLU ("Dead output: all 16 values of `criterion.relu` (ReLU)
were 0 for 3 steps in a row") and stopped the run.
"""

import torch
from torch import nn

torch.manual_seed(0)


class TripletLoss(nn.Module):
    def __init__(self, margin: float = 1.0) -> None:
        super().__init__()
        self.margin = margin
        self.relu = nn.ReLU()

    def forward(self, anchor, positive, negative):
        d_pos = (anchor - positive).pow(2).sum(-1)
        d_neg = (anchor - negative).pow(2).sum(-1)
        return self.relu(d_pos - d_neg + self.margin).mean()


net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = TripletLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
centres = torch.randn(4, 8)
for step in range(100):
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
