"""Sampling is bounded and leaves every global RNG as it found it."""

from __future__ import annotations

import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset

from support.data_checks import Images, check
from torchdoctor.data_checks.sampling import draw, redraw


class Counting(Dataset):
    def __init__(self, n):
        self.n, self.calls = n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.calls += 1
        return torch.full((4,), float(i)), i % 3


def test_a_big_dataset_is_sampled_boundedly():
    ds = Counting(100_000)
    r = check(ds, maxSamples=500)
    assert r["splits"][0]["sampled"] == 500 and r["splits"][0]["length"] == 100_000
    assert ds.calls < 520  # the sample, the randomness probes, nothing else


def test_the_note_says_whole_or_subset_as_drawn():
    assert draw("train", Counting(500), max_samples=500).notes == ["train: all 500 samples drawn"]
    assert draw("train", Counting(499), max_samples=500).notes == ["train: all 499 samples drawn"]
    assert draw("train", Counting(501), max_samples=500).notes == [
        "train: 500 of 501 samples drawn (a random subset, seed 0)"
    ]


def test_a_loader_is_read_for_at_most_max_batches():
    ds = Counting(10_000)
    d = draw("train", DataLoader(ds, batch_size=10, shuffle=True), max_batches=5)
    assert len(d.indices) == 50 and d.batch_shape == (10, 4)


def test_an_iterable_dataset_stops_at_max_samples():
    class Stream(IterableDataset):
        def __iter__(self):
            i = 0
            while True:  # endless
                yield torch.randn(4), 0
                i += 1

    assert len(draw("s", Stream(), max_samples=64).indices) == 64


def test_global_rng_state_is_restored():
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    before = (random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state().clone())
    loader = DataLoader(Images(100), batch_size=8, shuffle=True)
    check({"train": loader, "val": Images(50, seed=2)})
    after = (random.getstate(), np.random.get_state()[1], torch.get_rng_state())
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and torch.equal(before[2], after[2])


class Noise(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.rand(4), 0


def test_redraws_differ_between_indices_repeat_for_one_and_leave_the_rng_alone():
    before = torch.get_rng_state()
    a, b, again = redraw(Noise(), 1, 3), redraw(Noise(), 2, 3), redraw(Noise(), 1, 3)
    assert torch.equal(torch.get_rng_state(), before)
    assert all(np.array_equal(x, y) for x, y in zip(a, again))  # seeded by the index: reproducible
    assert not any(np.array_equal(x, y) for x, y in zip(a, b))  # not the same parameters for every index
    assert not np.array_equal(a[0], a[1])


class NamedImages(Dataset):
    """(file name, image, label): PyTorch-YOLOv3's ListDataset order; collated as (list of str, ...)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return f"img_{i:05d}.jpg", torch.full((3, 4, 4), float(i)), i % 4


class MultiCrop(Dataset):
    """A list of views of two sizes and a label (DINO): collated as [[B x 8 x 8, B x 8 x 8, B x 4 x 4], labels]."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        return [torch.rand(3, 8, 8), torch.rand(3, 8, 8), torch.rand(3, 4, 4)], i % 3


class Remarks(Dataset):
    """(text, class): a loader's batch is (list of str, labels), nothing numeric to check as features."""

    def __len__(self):
        return 40

    def __getitem__(self, i):
        return f"sentence number {i}", i % 4


def test_a_loader_of_unreadable_features_counts_its_samples_and_is_not_empty():
    d = draw("train", DataLoader(Remarks(), batch_size=8))
    assert d.indices == list(range(40)) and d.numeric == 0
    r = check({"train": DataLoader(Remarks(), batch_size=8, shuffle=True)})
    assert r["findings"] == [] and r["splits"][0]["sampled"] == 40
    assert any("not numeric arrays: not checked" in n for n in r["notes"])
    d = draw("train", DataLoader(NamedImages(40), batch_size=8))  # the image after the names is read
    assert d.indices == list(range(40)) and d.numeric == 40
    d = draw("train", DataLoader(MultiCrop(), batch_size=8, drop_last=True))
    assert len(d.indices) == 24  # the labels' count: the list's length (3) is the views'
    assert check({"train": DataLoader(MultiCrop(), batch_size=8)})["findings"] == []


def test_a_loader_that_gives_no_batch_is_still_empty():
    r = check({"train": DataLoader(NamedImages(5), batch_size=8, drop_last=True)})
    assert [f["kind"] for f in r["findings"]] == ["empty-split"]


class Sentences(Dataset):
    """Token ids <sos> ... <eos> of lengths 5..19 (``length``: all of one length), for pad_sequence."""

    def __init__(self, n, seed=0, length=None):
        g = torch.Generator().manual_seed(seed)
        sizes = [length - 2] * n if length else torch.randint(3, 18, (n,), generator=g).tolist()
        self.ids = [
            torch.cat([torch.tensor([2]), torch.randint(4, 900, (k,), generator=g), torch.tensor([3])]) for k in sizes
        ]

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"src": self.ids[i]}


def _padded(batch_first):
    return lambda batch: {"src": torch.nn.utils.rnn.pad_sequence([b["src"] for b in batch], batch_first, 1)}


def test_sequence_first_token_batches_are_read_batch_first():
    """pad_sequence's default [seq_len, batch]: each sentence is a sample, not each time step (whose
    <sos> row would repeat across every batch and split)."""
    d = draw("train", DataLoader(Sentences(100), batch_size=16, collate_fn=_padded(False)))
    assert d.indices == list(range(100)) and d.seq_first
    assert "train: batches are [seq_len, batch] (pad_sequence's default): read as batch-first" in d.notes
    splits = {
        "train": DataLoader(Sentences(200), batch_size=16, shuffle=True, collate_fn=_padded(False)),
        "val": DataLoader(Sentences(60, seed=1), batch_size=16, collate_fn=_padded(False)),
    }
    assert check(splits)["findings"] == []
    leak = {"train": splits["train"], "val": DataLoader(Sentences(200), batch_size=16, collate_fn=_padded(False))}
    assert "duplicates-across-splits" in [f["kind"] for f in check(leak)["findings"]]  # a real leak still is


def test_batch_first_token_batches_are_untouched():
    """[batch, seq_len] stays as it is, a seq_len equal to the batch size and a last batch whose seq_len is the
    batch size (dim 1 is the batch size there, but dim 0 holds the samples left) included."""
    d = draw("train", DataLoader(Sentences(20, length=8), batch_size=8, collate_fn=_padded(True)))
    assert d.indices == list(range(20)) and not d.seq_first and len(d.ys) == 20
    assert not any("seq_len" in n for n in d.notes)
    d = draw("train", DataLoader(Sentences(40), batch_size=8, collate_fn=_padded(True)))
    assert d.indices == list(range(40)) and not d.seq_first
