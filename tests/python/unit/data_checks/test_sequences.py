"""Token ids past the embedding, and the share of padding."""

from __future__ import annotations

import torch
from torch.utils.data import TensorDataset

from support.data_checks import check, kinds
from torchdoctor.data_checks import engine


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


class Translator(torch.nn.Module):
    """A source embedding, a target embedding and an output layer over the target vocabulary."""

    def __init__(self, src_vocab=100, tgt_vocab=60):
        super().__init__()
        self.src_emb = torch.nn.Embedding(src_vocab, 8, padding_idx=0)
        self.tgt_emb = torch.nn.Embedding(tgt_vocab, 8, padding_idx=0)
        self.generator = torch.nn.Linear(8, tgt_vocab)


def test_target_ids_of_a_pair_against_the_output_layer():
    src, tgt = tokens(high=100), tokens(length=30, high=60, seed=1)
    assert check(TensorDataset(src, tgt), Translator())["findings"] == []
    tgt[[4, 9], 2] = 75  # ids of a bigger target vocabulary
    r = check(TensorDataset(src, tgt), Translator())
    assert kinds(r) == ["token-ids-out-of-range"]
    f = r["findings"][0]
    assert f["indices"] == [4, 9] and f["details"]["field"] == 1 and f["details"]["numOutputs"] == 60


def test_next_token_targets_with_an_ignore_index_stay_quiet():
    """A language model's (inputs, targets): targets padded with -1 are left to the loss."""
    x = tokens(high=100)
    y = torch.cat([x[:, 1:], torch.full((100, 1), -1)], 1)
    lm = torch.nn.Sequential(torch.nn.Embedding(100, 8), torch.nn.Linear(8, 100))
    assert check(TensorDataset(x, y), lm)["findings"] == []


def test_padded_targets_of_a_pair():
    src, tgt = tokens(high=100), tokens(length=40, high=60, seed=1)
    tgt[:, 10:] = 0  # three quarters of every target is padding, the sources are not padded
    r = check(TensorDataset(src, tgt), Translator())
    assert kinds(r) == ["padding-share"] and r["findings"][0]["details"]["field"] == 1
    src[:, 8:] = 0  # both padded: one warning, which names the targets too
    r = check(TensorDataset(src, tgt), Translator())
    assert kinds(r) == ["padding-share"] and "targets (the second field) are 75% padding" in r["findings"][0]["message"]


def test_one_vocabulary_too_small_for_inputs_and_targets_is_one_error():
    x = tokens(high=100)
    y = torch.cat([x[:, 1:], x[:, :1]], 1)  # the next ids
    lm = torch.nn.Sequential(torch.nn.Embedding(90, 8), torch.nn.Linear(8, 90))
    r = check(TensorDataset(x, y), lm)
    assert kinds(r) == ["token-ids-out-of-range"] and "targets (the second field)" in r["findings"][0]["message"]


class Sentences(torch.utils.data.Dataset):
    """Unpadded (source, target) sentences of 6 to 24 ids, as a translation dataset returns them before
    its collate pads each batch: every length is a shape of its own."""

    def __init__(self, n=200, seed=0, high=100):
        g = torch.Generator().manual_seed(seed)
        lengths = torch.randint(6, 25, (n,), generator=g).tolist()
        self.pairs = [
            (torch.randint(4, high, (k,), generator=g), torch.randint(4, 60, (k + 2,), generator=g)) for k in lengths
        ]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        return self.pairs[i]


def test_ids_of_sentences_of_every_length_are_read():
    assert check(Sentences(), Translator())["findings"] == []
    ds = Sentences()
    lengths = [len(s) for s, _ in ds.pairs]
    common = max(set(lengths), key=lengths.count)
    rare = [i for i, k in enumerate(lengths) if k != common][:3]
    for i in rare:
        ds.pairs[i][0][0] = 130  # past the source embedding, in sentences of other lengths
        ds.pairs[i][1][1] = 75  # past the target vocabulary too: one error says both
    r = check(ds, Translator())
    assert kinds(r) == ["token-ids-out-of-range"] and r["findings"][0]["indices"] == rare
    assert "targets (the second field)" in r["findings"][0]["message"]
    ds = Sentences()
    for i in rare:
        ds.pairs[i][1][1] = 75  # the targets alone
    r = check(ds, Translator())
    assert kinds(r) == ["token-ids-out-of-range"] and r["findings"][0]["indices"] == rare
    assert r["findings"][0]["details"]["field"] == 1


def test_a_pair_of_sentences_for_a_classifier_is_no_target_sequence():
    """(premise ids, hypothesis ids) into a 3-way classifier: the second field's ids are inputs too; the
    head's 3 outputs are classes, not a vocabulary, so its ids are not compared with them."""
    classifier = torch.nn.Sequential(torch.nn.Embedding(100, 8), torch.nn.Linear(8, 3))
    assert check(TensorDataset(tokens(), tokens(seed=1)), classifier)["findings"] == []


class Tagged(torch.utils.data.Dataset):
    """Token classification: (ids padded with 0, one tag per token), most tags 0 (outside any entity),
    padded tags -100 (the loss's default ignore index)."""

    def __init__(self, n=150, length=30, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.zeros(n, length, dtype=torch.int64)
        self.tags = torch.full((n, length), -100, dtype=torch.int64)
        for i, k in enumerate(torch.randint(22, length + 1, (n,), generator=g).tolist()):
            self.ids[i, :k] = torch.randint(1, 500, (k,), generator=g)
            entity = torch.rand(k, generator=g) < 0.15
            self.tags[i, :k] = torch.where(entity, torch.randint(1, 7, (k,), generator=g), 0)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.ids[i], self.tags[i]


def test_the_commonest_tag_of_a_tagger_is_no_padding():
    tagger = torch.nn.Sequential(torch.nn.Embedding(500, 8, padding_idx=0), torch.nn.Linear(8, 7))
    r = engine.run({"train": Tagged()}, tagger, {}, loss=torch.nn.CrossEntropyLoss())
    assert r["findings"] == []
    assert check(Tagged(), tagger)["findings"] == []
