"""Healthy: an LSTM language model regularised the AWD way and trained with SGD at lr 30.

Embedding dropout (whole rows of the embedding matrix dropped, read with ``F.embedding``),
locked (variational) dropout, tied encoder and decoder weights, activation and temporal
activation regularisation on the last layer's outputs, a random BPTT length with the learning
rate rescaled to it each batch, hidden states carried over and detached, and
``clip_grad_norm_(..., 0.25)``: a learning rate of 30 is their recipe, not an explosion.
"""

import torch
import torch.nn.functional as F
from torch import nn


class LockedDropout(nn.Module):
    def forward(self, x, p: float = 0.3):
        if not self.training or not p:
            return x
        mask = x.new_empty(1, x.size(1), x.size(2)).bernoulli_(1 - p) / (1 - p)
        return x * mask


class LanguageModel(nn.Module):
    def __init__(self, tokens: int = 30, width: int = 24) -> None:
        super().__init__()
        self.encoder = nn.Embedding(tokens, width)
        self.lstm = nn.LSTM(width, width)
        self.lockdrop = LockedDropout()
        self.decoder = nn.Linear(width, tokens)
        self.decoder.weight = self.encoder.weight  # tied

    def forward(self, ids, hidden):
        weight = self.encoder.weight
        if self.training:  # drop whole words: rows of the embedding matrix
            keep = weight.new_empty(weight.size(0), 1).bernoulli_(0.9) / 0.9
            weight = weight * keep
        emb = self.lockdrop(F.embedding(ids, weight), 0.2)
        raw, hidden = self.lstm(emb, hidden)
        dropped = self.lockdrop(raw, 0.3)
        return self.decoder(dropped), hidden, raw, dropped


torch.manual_seed(8)
tokens = 30
stream = torch.tensor([(i * 7 + i // 5) % tokens for i in range(8 * 400)]).view(8, -1).t().contiguous()
model = LanguageModel(tokens)
optimizer = torch.optim.SGD(model.parameters(), lr=30.0, weight_decay=1.2e-6)
hidden = None
position, base_lr = 0, 30.0
for _ in range(30):
    seq_len = max(5, int(torch.normal(10.0, 2.0, ()).item()))
    if position + seq_len + 1 >= stream.size(0):
        position = 0
    data, targets = stream[position : position + seq_len], stream[position + 1 : position + 1 + seq_len]
    optimizer.param_groups[0]["lr"] = base_lr * seq_len / 10
    model.train()
    hidden = tuple(h.detach() for h in hidden) if hidden is not None else None
    optimizer.zero_grad()
    output, hidden, raw, dropped = model(data, hidden)
    raw_loss = F.cross_entropy(output.view(-1, tokens), targets.reshape(-1))
    loss = raw_loss + 2 * dropped.pow(2).mean() + 1 * (raw[1:] - raw[:-1]).pow(2).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    optimizer.step()
    position += seq_len
print(f"final loss {raw_loss.item():.3f}")
