"""Healthy: a padded-sequence classifier on ``nn.TransformerEncoder``, evaluated in eval mode (2026-12-06).

In evaluation under no_grad with a ``src_key_padding_mask`` the encoder takes torch's fast path:
its layers pass nested tensors (no padding) to each other, and only the encoder's output is a
padded tensor again. No reduction reads a nested tensor: the watch printed an internal error.
"""

import torch
from torch import nn

torch.manual_seed(0)
embed = nn.Embedding(30, 16, padding_idx=0)
encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True), 2)
head = nn.Linear(16, 3)
modules = nn.ModuleList([embed, encoder, head])
optimizer = torch.optim.Adam(modules.parameters(), lr=2e-3)


def batch(n: int = 16, width: int = 12):
    lengths = torch.randint(3, width + 1, (n,))
    ids = torch.randint(1, 30, (n, width))
    pad = torch.arange(width)[None] >= lengths[:, None]
    return ids.masked_fill(pad, 0), pad, lengths


def classify(ids, pad, lengths):
    hidden = encoder(embed(ids), src_key_padding_mask=pad)
    return head(hidden.masked_fill(pad[..., None], 0.0).sum(1) / lengths[:, None])


for _step in range(30):
    ids, pad, lengths = batch()
    loss = nn.functional.cross_entropy(classify(ids, pad, lengths), ids[:, 0] % 3)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
modules.eval()
with torch.no_grad():
    ids, pad, lengths = batch()
    accuracy = (classify(ids, pad, lengths).argmax(1) == ids[:, 0] % 3).float().mean().item()
print(f"encoder: loss {loss.item():.3f}, eval accuracy {accuracy:.2f}")
