"""Healthy: a top-2 mixture of experts whose router returns its gates scattered into ``-inf`` (2026-12-07).

The router keeps each token's two largest gate logits and writes them into a tensor filled with
``-inf`` (``full_like(logits, -inf).scatter(-1, idx, top)``, as top-k routers and top-k samplers
do), so the softmax gives the other experts exactly 0. Every row keeps two finite values. The watch
called the router's output an Inf output ("Inf in the output of `moe` ... 128 of 256 values") and
stopped the run at step 0.
"""

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)
WIDTH, EXPERTS, TOP = 16, 4, 2


class MoE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(WIDTH, EXPERTS)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH)) for _ in range(EXPERTS)
        )

    def forward(self, x):
        logits = self.gate(x)
        top, idx = logits.topk(TOP, -1)
        routed = torch.full_like(logits, float("-inf")).scatter(-1, idx, top)
        weights = F.softmax(routed, -1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            chosen = (idx == e).any(-1)
            if chosen.any():
                out[chosen] += weights[chosen, e : e + 1] * expert(x[chosen])
        balance = (F.softmax(logits, -1).mean(0) * (weights > 0).float().mean(0)).sum() * EXPERTS
        return out, balance, routed


moe, head = MoE(), nn.Linear(WIDTH, 1)
optimizer = torch.optim.Adam([*moe.parameters(), *head.parameters()], lr=1e-3)
for _ in range(60):
    x = torch.randn(64, WIDTH)
    hidden, balance, _ = moe(x)
    loss = F.mse_loss(head(hidden), 2 * x[:, :1]) + 0.01 * balance
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3f}")
