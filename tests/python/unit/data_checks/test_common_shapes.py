"""Healthy data of shapes real projects use, and the same shapes with a real bug (2026-12-06).

Each healthy setup here was falsely flagged, or its planted bug missed, before: a training loader
rebalanced by ``WeightedRandomSampler`` called drift, masks all of one class, constant class labels
with a classification loss, integer multi-hot targets for a BCE loss, and a tokenizer's
``padding="max_length"`` beside its ``attention_mask`` called a padding problem.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset, WeightedRandomSampler

from support.data_checks import check, cnn, kinds
from torchdoctor.data_checks import engine


def run(splits, model=None, loss=None):
    return engine.run(splits, model, {}, loss=loss)


class Churn(Dataset):
    """Standardised customer features, 5 % positives whose features sit one std higher."""

    def __init__(self, n=1000, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.y = (torch.rand(n, generator=g) < 0.05).long()
        self.x = torch.randn(n, 10, generator=g) + self.y[:, None]

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def rebalanced(ds, weights=None):
    if weights is None:
        weights = (1.0 / torch.bincount(ds.y).float())[ds.y]
    sampler = WeightedRandomSampler(weights, len(ds), generator=torch.Generator().manual_seed(0))
    return DataLoader(ds, batch_size=64, sampler=sampler)


def test_a_rebalanced_training_loader_is_not_drift_but_a_real_shift_still_is():
    val = DataLoader(Churn(300, 1), batch_size=64)
    r = run({"train": rebalanced(Churn()), "val": val})
    assert r["findings"] == []
    assert any("drift against train not judged" in n for n in r["notes"])
    # equal weights draw the data as it is: a shifted val is still drift
    drifted = Churn(300, 1)
    drifted.x += 2.0
    r = run({"train": rebalanced(Churn(), torch.ones(1000)), "val": DataLoader(drifted, batch_size=64)})
    assert "drift" in kinds(r)


class Scenes(Dataset):
    """Normalised 3 x 32 x 32 scenes with an int64 class map in 8 x 8 blocks; ``palette`` turns the map
    into 0..255 palette values read back with ToTensor's scale and ``.long()`` (every class 0)."""

    def __init__(self, n=60, seed=0, classes=4, to_tensor_bug=False):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 3, 32, 32, generator=g)
        blocks = torch.randint(0, classes, (n, 4, 4), generator=g)
        self.masks = blocks.repeat_interleave(8, 1).repeat_interleave(8, 2)
        self.bug = to_tensor_bug

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        mask = self.masks[i]
        if self.bug:
            mask = (mask.float() / 255.0).long()
        return self.x[i], mask


class Segmenter(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def test_masks_all_of_one_class_are_found_in_training_only():
    ce = nn.CrossEntropyLoss()
    healthy = run({"train": Scenes(), "val": Scenes(20, 1)}, Segmenter(), ce)
    assert healthy["findings"] == []
    r = run({"train": Scenes(to_tensor_bug=True), "val": Scenes(20, 1)}, Segmenter(), ce)
    assert kinds(r) == ["label-imbalance"]
    f = r["findings"][0]
    assert f["split"] == "train" and f["details"]["majorityShare"] == 1.0 and "ToTensor" in f["message"]
    # an evaluation split of empty masks (no ground truth) and a handful of masks are not judged
    assert run({"train": Scenes(), "val": Scenes(20, 1, to_tensor_bug=True)}, Segmenter(), ce)["findings"] == []
    assert run({"train": Scenes(10, to_tensor_bug=True)}, Segmenter(), ce)["findings"] == []


def test_labels_of_one_class_need_a_classification_loss_to_be_reported():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 3, 16, 16, generator=g)
    zeros = TensorDataset(x, torch.zeros(200, dtype=torch.long))
    # without a loss one value is as often a placeholder label (an autoencoder's `img, 0`)
    assert run({"train": zeros}, cnn(3, 10))["findings"] == []
    r = run({"train": zeros}, cnn(3, 10), nn.CrossEntropyLoss())
    assert kinds(r) == ["label-imbalance"] and r["findings"][0]["details"]["majorityShare"] == 1.0
    mixed = TensorDataset(x, torch.arange(200) % 10)
    assert run({"train": mixed}, cnn(3, 10), nn.CrossEntropyLoss())["findings"] == []


def multi_hot(n=150, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, 16, 16, generator=g)
    y = (torch.rand(n, 6, generator=g) < torch.linspace(0.1, 0.5, 6)).to(dtype)
    return TensorDataset(x, y)


def test_integer_multi_hot_targets_for_a_bce_loss_are_an_error():
    for loss in (nn.BCEWithLogitsLoss(), nn.BCELoss()):
        assert run({"train": multi_hot()}, cnn(3, 6), loss)["findings"] == []
        for dtype in (torch.int64, torch.uint8, torch.bool):
            r = run({"train": multi_hot(dtype=dtype)}, cnn(3, 6), loss)
            assert kinds(r) == ["onehot-labels-for-loss"], dtype
            assert r["findings"][0]["details"]["width"] == 6
    # without the loss, integer rows may be .float()-ed by the loop: nothing said
    assert run({"train": multi_hot(dtype=torch.int64)}, cnn(3, 6))["findings"] == []


class Tokenized(Dataset):
    """A tokenizer's output padded to max_length=128 (zeros after [SEP]), with or without its
    attention_mask, and a class label."""

    def __init__(self, n=120, seed=0, with_mask=True):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(10, 50, (n,), generator=g)
        self.ids = torch.zeros(n, 128, dtype=torch.long)
        for k, length in enumerate(self.lengths.tolist()):
            self.ids[k, :length] = torch.randint(1000, 30000, (length,), generator=g)
        self.y = torch.randint(0, 3, (n,), generator=g)
        self.with_mask = with_mask

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        sample = {"input_ids": self.ids[i], "labels": self.y[i]}
        if self.with_mask:
            sample["attention_mask"] = (self.ids[i] != 0).long()
        return sample


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30522, 8, padding_idx=0)
        self.cls = nn.Linear(8, 3)

    def forward(self, input_ids, attention_mask=None):
        return self.cls(self.emb(input_ids).mean(1))


def test_max_length_padding_beside_an_attention_mask_is_a_note_only():
    for splits in ({"train": Tokenized()}, {"train": DataLoader(Tokenized(), batch_size=16)}):
        r = run(splits, Encoder())
        assert r["findings"] == []
        assert any("attention_mask" in n and "padding" in n for n in r["notes"])
    r = run({"train": Tokenized(with_mask=False)}, Encoder())
    assert kinds(r) == ["padding-share"]


def test_an_id_column_shared_between_tables_is_named_as_its_value():
    rows = {"customer_id": torch.arange(100).numpy(), "age": (torch.arange(100) % 60 + 18).numpy()}
    val = {k: v[80:] for k, v in rows.items()}
    r = check({"train": rows, "val": val})
    found = [f for f in r["findings"] if f["kind"] == "id-overlap"]
    assert found and "(e.g. 80)" in found[0]["message"]


class Stored(Dataset):
    """Images kept as one tensor, returned as they are: the transforms live in a wrapper."""

    def __init__(self, n=400, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.rand(n, 3, 16, 16, generator=g)
        self.y = torch.randint(0, 4, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class WithTransform(Dataset):
    """The usual per-split transform wrapper around a ``random_split`` part: only train flips."""

    def __init__(self, subset, train):
        self.subset, self.train = subset, train

    def __len__(self):
        return len(self.subset)

    def __getitem__(self, i):
        x, y = self.subset[i]
        if self.train and torch.rand(()) < 0.5:
            x = x.flip(-1)
        return (x - 0.5) / 0.29, y


def test_a_leak_behind_per_split_transform_wrappers_is_found_on_the_stored_rows():
    full = Stored()
    train, val = torch.utils.data.random_split(full, [320, 80], generator=torch.Generator().manual_seed(1))
    assert run({"train": WithTransform(train, True), "val": WithTransform(val, False)})["findings"] == []
    leaked = torch.utils.data.Subset(full, train.indices[:80])  # val built from train's indices
    r = run({"train": WithTransform(train, True), "val": WithTransform(leaked, False)})
    assert kinds(r) == ["duplicates-across-splits"]
    f = r["findings"][0]
    assert f["split"] == "val" and f["count"] == 80 and "stored rows" in f["message"]


class Paired(Dataset):
    """Images beside a Dataset of their multi-hot tags under another name: the tags are no stored
    images, so the samples as drawn are compared."""

    def __init__(self, n=200):
        g = torch.Generator().manual_seed(2)
        self.pictures = [torch.rand(3, 8, 8, generator=g) for _ in range(n)]
        self.tags = TensorDataset((torch.rand(n, 8, generator=g) < 0.5).float())

    def __len__(self):
        return len(self.pictures)

    def __getitem__(self, i):
        return self.pictures[i], self.tags[i][0]


def test_a_dataset_held_under_another_name_is_not_read_as_the_stored_rows():
    assert run({"train": Paired()})["findings"] == []


class Clips(Dataset):
    """One-second 16 kHz clips, 1 x 16000 floats in [-1, 1]; ``pcm`` leaves them as int16 sample values,
    ``silent_nan`` divides every fifth clip by its zero peak (NaN throughout), ``flip`` makes it random."""

    def __init__(self, n=60, pcm=False, silent_nan=False, flip=False):
        g = torch.Generator().manual_seed(4)
        t = torch.arange(16000) / 16000
        pitch = torch.randint(100, 2000, (n, 1), generator=g)
        self.w = (0.3 * torch.sin(2 * torch.pi * pitch * t) + 0.01 * torch.randn(n, 16000, generator=g))[:, None]
        self.y = torch.randint(0, 5, (n,), generator=g)
        self.pcm, self.silent_nan, self.flip = pcm, silent_nan, flip

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        w = self.w[i]
        if self.pcm:
            w = (w * 32767).round()
        if self.silent_nan and i % 5 == 0:
            w = w * 0 / 0.0
        if self.flip and torch.rand(()) < 0.5:
            w = -w
        return w, self.y[i]


def test_int16_scale_waveforms_are_unnormalised_and_float_audio_is_quiet():
    assert run({"train": Clips(), "val": Clips(20)})["findings"] == []
    r = run({"train": Clips(pcm=True)})
    assert kinds(r) == ["unnormalised"] and "32768" in r["findings"][0]["message"]


def test_nan_samples_are_nonfinite_only_not_also_blank_or_copies():
    for flip in (False, True):  # as drawn, and redrawn seeded (a random dataset)
        r = run({"train": Clips(silent_nan=True, flip=flip)})
        assert kinds(r) == ["nonfinite"], flip
        assert r["findings"][0]["indices"] == list(range(0, 60, 5))
