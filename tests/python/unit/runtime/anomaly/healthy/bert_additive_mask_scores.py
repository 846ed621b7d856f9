"""Healthy: attention whose scoring module adds BERT's ``-10000.0`` padding mask (2026-12-07).

A small classifier of padded sequences: its ``Scores`` module returns
``q @ k^T / sqrt(d) + (1 - keep) * -10000.0``, as BERT's first PyTorch ports built their extended
attention mask, and the attention takes a softmax over it. The padded keys' scores are -10000 plus
their own small score (-10001.3, -9999.2...), so the values past the threshold of 1e4 are not one
value: the watch called the output exploding ("Exploding values in the output of
`attend.scores` (Scores) at step 0: max |x| = 10001") and stopped the run.
"""

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)
VOCAB, WIDTH, LENGTH, BATCH = 20, 16, 7, 8


class Scores(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k = nn.Linear(WIDTH, WIDTH), nn.Linear(WIDTH, WIDTH)

    def forward(self, h, keep):
        scores = self.q(h) @ self.k(h).transpose(1, 2) / WIDTH**0.5
        return scores + (1.0 - keep[:, None, :]) * -10000.0


class Attend(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scores, self.value = Scores(), nn.Linear(WIDTH, WIDTH)

    def forward(self, h, keep):
        return h + torch.softmax(self.scores(h, keep), -1) @ self.value(h)


embed, attend, head = nn.Embedding(VOCAB, WIDTH), Attend(), nn.Linear(WIDTH, 2)
optimizer = torch.optim.AdamW([*embed.parameters(), *attend.parameters(), *head.parameters()], lr=3e-3)
for _ in range(40):
    tokens = torch.randint(1, VOCAB, (BATCH, LENGTH))
    lengths = torch.randint(2, LENGTH + 1, (BATCH,))
    keep = (torch.arange(LENGTH)[None] < lengths[:, None]).float()
    label = (tokens[:, 0] > VOCAB // 2).long()
    h = attend(embed(tokens), keep)
    pooled = (h * keep[..., None]).sum(1) / keep.sum(1, keepdim=True)
    loss = F.cross_entropy(head(pooled), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3f}")
