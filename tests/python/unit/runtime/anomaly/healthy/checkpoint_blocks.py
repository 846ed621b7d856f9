"""Healthy: residual MLP blocks under activation checkpointing, both kinds (2026-12-06).

``torch.utils.checkpoint`` runs each block's forward once without a graph (the reentrant kind:
under no_grad) and again during ``backward()``, so every block is called twice a step and its
dropout draws the same mask twice. One model per kind, then an evaluation without checkpointing.
"""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Dropout(0.1), nn.Linear(4 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Net(nn.Module):
    def __init__(self, reentrant: bool, width: int = 32, depth: int = 3) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 1)
        self.reentrant = reentrant

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=self.reentrant) if self.training else block(x)
        return self.head(x)


torch.manual_seed(0)
teacher = torch.randn(32, 1)
for reentrant in (False, True):
    net = Net(reentrant)
    optimizer = torch.optim.AdamW(net.parameters(), lr=3e-3)
    for _step in range(40):
        x = torch.randn(32, 32, requires_grad=reentrant)  # the reentrant kind needs an input with grad
        loss = nn.functional.mse_loss(net(x), torch.tanh(x @ teacher))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        x = torch.randn(64, 32)
        error = nn.functional.mse_loss(net(x), torch.tanh(x @ teacher)).item()
    print(f"checkpoint use_reentrant={reentrant}: eval mse {error:.3f}")
