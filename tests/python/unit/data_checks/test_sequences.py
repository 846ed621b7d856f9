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


class Windows(torch.utils.data.Dataset):
    """Next-token windows over one token stream (input ids, the same shifted by one), with a stride,
    as GPT training scripts cut a corpus; token frequencies Zipf-like over a GPT-2-sized vocabulary."""

    def __init__(self, n_tokens=40_000, length=64, stride=32, seed=0):
        g = torch.Generator().manual_seed(seed)
        ranks = torch.floor(torch.rand(n_tokens, generator=g).clamp_min(1e-9) ** -1.2).long()
        self.ids = ranks % 50257
        self.starts = list(range(0, n_tokens - length - 1, stride))
        self.length = length

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        return self.ids[s : s + self.length], self.ids[s + 1 : s + self.length + 1]


class GPTLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(50257, 16)
        self.pos_emb = torch.nn.Embedding(64, 16)
        self.lm_head = torch.nn.Linear(16, 50257, bias=False)

    def forward(self, idx):
        return self.lm_head(self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1])))


def test_language_model_windows_are_silent():
    train = torch.utils.data.DataLoader(Windows(seed=0), batch_size=8, shuffle=True, drop_last=True)
    r = check({"train": train, "val": Windows(n_tokens=8_000, seed=1)}, GPTLike())
    assert r["findings"] == [], r["findings"]
    assert r["splits"][0]["layout"] == "tokens"


def _char_lm(ignore: int):
    """makemore's names: x = [<start>, chars..., 0, 0...], y = [chars..., <end>=0, ignore, ignore...]
    (16 tokens, names of 4-7 characters: most of each row is padding)."""
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(4, 8, (200,), generator=g)
    x = torch.zeros(200, 16, dtype=torch.long)
    y = torch.full((200, 16), ignore, dtype=torch.long)
    for i, n in enumerate(lengths.tolist()):
        chars = torch.randint(1, 27, (n,), generator=g)
        x[i, 1 : n + 1] = chars
        y[i, :n] = chars
        y[i, n] = 0  # <end>
    return TensorDataset(x, y)


def test_padding_whose_targets_are_an_ignore_index_is_only_noted():
    r = check(_char_lm(ignore=-1))
    assert r["findings"] == []
    assert any("every padded position's target is an ignore index" in n for n in r["notes"])


def test_padding_whose_targets_are_trained_on_is_reported():
    assert kinds(check(_char_lm(ignore=0))) == ["padding-share"]
