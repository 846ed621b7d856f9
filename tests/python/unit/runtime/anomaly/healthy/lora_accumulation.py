"""Healthy: zero-initialised layers trained with gradient accumulation over 4 micro-steps.

LoRA: a frozen base projection plus ``up(down(x))`` where ``up`` starts at zero, so the adapter's
output is exactly 0 until the first optimizer step, i.e. for the first 4 ``backward()`` calls.
adaLN-Zero: a conditioning projection initialised to zero gates a residual branch, so the
branch's contribution is 0 at first too. Both layers receive non-zero gradients from the very
first backward: they are learning, not dead.
"""

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, width: int, rank: int = 4) -> None:
        super().__init__()
        self.base = nn.Linear(width, width)
        self.base.requires_grad_(False)
        self.down = nn.Linear(width, rank, bias=False)
        self.up = nn.Linear(rank, width, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


class GatedBlock(nn.Module):
    """A residual MLP branch scaled and gated by a zero-initialised conditioning projection."""

    def __init__(self, width: int, cond: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width, elementwise_affine=False)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.SiLU(), nn.Linear(2 * width, width))
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(cond, 3 * width))
        nn.init.zeros_(self.modulation[1].weight)
        nn.init.zeros_(self.modulation[1].bias)

    def forward(self, x, c):
        shift, scale, gate = self.modulation(c).chunk(3, dim=-1)
        return x + gate * self.mlp(self.norm(x) * (1 + scale) + shift)


class Model(nn.Module):
    def __init__(self, width: int = 32, cond: int = 8) -> None:
        super().__init__()
        self.adapted = LoRALinear(width)
        self.block = GatedBlock(width, cond)
        self.head = nn.Linear(width, 1)

    def forward(self, x, c):
        return self.head(self.block(torch.relu(self.adapted(x)), c))


torch.manual_seed(4)
model = Model()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
accumulate = 4
target = nn.Linear(32, 1)
for step in range(160):
    x, c = torch.randn(16, 32), torch.randn(16, 8)
    with torch.no_grad():
        y = target(x) + c[:, :1]
    loss = nn.functional.mse_loss(model(x, c), y) / accumulate
    loss.backward()
    if (step + 1) % accumulate == 0:
        optimizer.step()
        optimizer.zero_grad()
print(f"final loss {loss.item() * accumulate:.4f}")
