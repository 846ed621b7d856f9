"""Healthy: stochastic depth (DropPath, as in Swin/ConvNeXt backbones) fine-tuned with one sample
per step: a residual branch is dropped for the whole batch, sometimes several steps in a row."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1.0 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep


class Block(nn.Module):
    def __init__(self, d, p):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop_path = DropPath(p)

    def forward(self, x):
        return x + self.drop_path(self.mlp(self.norm(x)))


depth = 8
net = nn.Sequential(*[Block(32, 0.4 * i / (depth - 1)) for i in range(depth)], nn.Linear(32, 5))
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
for _step in range(40):
    x, y = torch.randn(1, 10, 32), torch.randint(0, 5, (1,))  # batch of one
    opt.zero_grad()
    loss = F.cross_entropy(net(x).mean(1), y)
    loss.backward()
    opt.step()
print("done, last loss", loss.item())
