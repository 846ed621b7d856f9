"""Healthy: a diffusion transformer in the shape of DiT, trained on noise prediction.

Patch embedding, sinusoidal timestep and label embeddings summed into a conditioning vector,
blocks whose adaLN modulation starts at exactly 0 (adaLN-Zero), a final layer whose projection
is zero too (the whole model outputs 0 at step 0), a linear beta schedule, an MSE on the noise
plus a learned-variance term through a log, and an EMA copy in eval mode updated under no_grad.
"""

import copy
import math

import torch
from torch import nn


def timestep_features(t, dim: int = 32):
    freqs = torch.exp(-math.log(10000) * torch.arange(dim // 2) / (dim // 2))
    angles = t[:, None].float() * freqs[None]
    return torch.cat([angles.cos(), angles.sin()], dim=-1)


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.attn = nn.MultiheadAttention(width, 4, batch_first=True)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(approximate="tanh"), nn.Linear(2 * width, width))
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))
        nn.init.zeros_(self.modulation[1].weight)
        nn.init.zeros_(self.modulation[1].bias)

    def forward(self, x, c):
        shift1, scale1, gate1, shift2, scale2, gate2 = self.modulation(c)[:, None].chunk(6, dim=-1)
        h = self.norm1(x) * (1 + scale1) + shift1
        x = x + gate1 * self.attn(h, h, h, need_weights=False)[0]
        return x + gate2 * self.mlp(self.norm2(x) * (1 + scale2) + shift2)


class TinyDiT(nn.Module):
    def __init__(self, channels: int = 4, patch: int = 2, width: int = 32, classes: int = 5) -> None:
        super().__init__()
        self.patch = nn.Conv2d(channels, width, patch, stride=patch)
        self.time = nn.Sequential(nn.Linear(32, width), nn.SiLU(), nn.Linear(width, width))
        self.label = nn.Embedding(classes + 1, width)  # the extra row: the dropped label
        self.blocks = nn.ModuleList(Block(width) for _ in range(2))
        self.final = nn.Linear(width, patch * patch * channels * 2)  # noise and variance
        nn.init.zeros_(self.final.weight)
        nn.init.zeros_(self.final.bias)
        self.channels, self.size = channels, patch

    def forward(self, x, t, y):
        b, _, height, _ = x.shape
        h = self.patch(x).flatten(2).transpose(1, 2)
        c = self.time(timestep_features(t)) + self.label(y)
        for block in self.blocks:
            h = block(h, c)
        out = self.final(h)  # (b, patches, p*p*2C) back to images
        grid, p = height // self.size, self.size
        out = out.view(b, grid, grid, p, p, 2 * self.channels).permute(0, 5, 1, 3, 2, 4)
        return out.reshape(b, 2 * self.channels, height, height).chunk(2, dim=1)


torch.manual_seed(11)
model = TinyDiT()
ema = copy.deepcopy(model).requires_grad_(False).eval()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0)
betas = torch.linspace(1e-4, 0.02, 1000)
alphas = torch.cumprod(1 - betas, 0)
prototypes = torch.randn(5, 4, 8, 8)
for _ in range(30):
    y = torch.randint(0, 5, (8,))
    x0 = prototypes[y] + 0.1 * torch.randn(8, 4, 8, 8)
    y = torch.where(torch.rand(8) < 0.1, torch.full_like(y, 5), y)  # classifier-free guidance drop
    t = torch.randint(0, 1000, (8,))
    noise = torch.randn_like(x0)
    a = alphas[t].view(-1, 1, 1, 1)
    xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
    eps, var_logit = model(xt, t, y)
    log_var = torch.log(betas[t].view(-1, 1, 1, 1)) + torch.tanh(var_logit)  # a learned range
    loss = (eps - noise).pow(2).mean() + 1e-3 * (log_var.exp() - log_var).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(0.99).add_(p, alpha=0.01)
print(f"final loss {loss.item():.3f}")
