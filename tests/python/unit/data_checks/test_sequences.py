"""Token ids past the embedding, and the share of padding."""

from __future__ import annotations

import torch
from torch.utils.data import TensorDataset

from support.data_checks import check, kinds


class LM(torch.nn.Module):
    def __init__(self, vocab=100, padding_idx=None):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, 8, padding_idx=padding_idx)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.emb(x).mean(1))


def tokens(n=100, length=32, high=100, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(1, high, (n, length), generator=g)


def test_ids_past_the_embedding():
    x = tokens()
    x[3, 5] = 120
    r = check(TensorDataset(x, torch.arange(100) % 2), LM())
    assert kinds(r) == ["token-ids-out-of-range"]
    assert r["findings"][0]["indices"] == [3] and r["findings"][0]["details"]["maxId"] == 120


def test_padding_share_with_a_known_pad_id():
    x = tokens()
    x[:, 8:] = 0
    r = check(TensorDataset(x, torch.arange(100) % 2), LM(padding_idx=0))
    assert kinds(r) == ["padding-share"] and r["findings"][0]["details"]["share"] == 0.75


def test_trailing_zeros_without_a_pad_id():
    x = tokens()
    x[:, 10:] = 0
    assert kinds(check(TensorDataset(x, torch.arange(100) % 2))) == ["padding-share"]


def test_healthy_sequences_are_silent():
    x = tokens()
    x[:, 28:] = 0  # a little padding
    assert check(TensorDataset(x, torch.arange(100) % 2), LM(padding_idx=0))["findings"] == []
