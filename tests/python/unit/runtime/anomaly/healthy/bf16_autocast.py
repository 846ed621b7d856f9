"""Healthy: bfloat16 autocast (no scaler needed: bfloat16 has float32's range).

A small transformer-like block (attention written out, LayerNorm, MLP) on a toy copy task.
"""

import math

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.out = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        weights = (q @ k.transpose(-2, -1) / math.sqrt(c // self.heads)).softmax(dim=-1)
        x = x + self.out((weights @ v).transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.norm2(x))


class Tiny(nn.Module):
    def __init__(self, vocab: int = 16, width: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.Sequential(Block(width, 4), Block(width, 4))
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


torch.manual_seed(2)
model = Tiny()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for _ in range(60):
    tokens = torch.randint(0, 16, (16, 12))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.float().view(-1, 16), tokens.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
