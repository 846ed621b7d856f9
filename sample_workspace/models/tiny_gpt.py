"""A small GPT-shaped language model: token and position embeddings, a stack of pre-norm
transformer blocks (causal self-attention, then an MLP), a final norm and a head whose weight
is the token embedding's (tied weights, as GPT-2 does).

The views on a real model: ``tiny_gpt_views.py`` trains it for a few steps with gradient
clipping; the gradient flow and the shape trace fold its twelve blocks (``transformer.h.0`` to
``transformer.h.11``) and the model's line in Variables counts the tied weight once.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int, context: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.attn_drop = nn.Dropout(0.0)
        self.resid_drop = nn.Dropout(0.0)
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(self, x):
        batch, steps, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q = q.view(batch, steps, self.heads, width // self.heads).transpose(1, 2)
        k = k.view(batch, steps, self.heads, width // self.heads).transpose(1, 2)
        v = v.view(batch, steps, self.heads, width // self.heads).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        scores = scores.masked_fill(self.mask[:, :, :steps, :steps] == 0, float("-inf"))
        weights = self.attn_drop(F.softmax(scores, dim=-1))
        mixed = (weights @ v).transpose(1, 2).contiguous().view(batch, steps, width)
        return self.resid_drop(self.proj(mixed))


class FeedForward(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        return self.drop(self.down(self.act(self.up(x))))


class Block(nn.Module):
    def __init__(self, width: int, heads: int, context: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, context)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = FeedForward(width)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 64, context: int = 16, width: int = 32, heads: int = 2, blocks: int = 12):
        super().__init__()
        self.context = context
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(vocab, width),
                wpe=nn.Embedding(context, width),
                drop=nn.Dropout(0.0),
                h=nn.ModuleList([Block(width, heads, context) for _ in range(blocks)]),
                ln_f=nn.LayerNorm(width),
            )
        )
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied: one tensor, two names

    def forward(self, tokens):
        steps = tokens.size(1)
        positions = torch.arange(steps, device=tokens.device)
        x = self.transformer.drop(self.transformer.wte(tokens) + self.transformer.wpe(positions))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))
