"""Healthy: a differentiable architecture search cell (DARTS shape): a softmax-weighted sum of
candidate operations, one of them the "none" candidate that returns zeros on purpose."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NoConnection(nn.Module):
    def forward(self, x):
        return x * 0.0  # "no edge": zeros of the right shape, on purpose


class Candidates(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ops = nn.ModuleList([NoConnection(), nn.Identity(), nn.Conv2d(c, c, 3, padding=1)])
        self.logits = nn.Parameter(torch.zeros(len(self.ops)))

    def forward(self, x):
        w = F.softmax(self.logits, dim=0)
        return sum(wi * op(x) for wi, op in zip(w, self.ops))


model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), Candidates(8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)
)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _step in range(6):
    x, y = torch.randn(16, 3, 8, 8), torch.randint(0, 4, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
print("trained; candidate weights:", F.softmax(model[1].logits, 0).tolist())
