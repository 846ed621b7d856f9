"""Correct datasets in the shape of real code stay silent: a tabular dataset of categorical codes
(one Embedding per column) beside continuous features, small feature vectors that repeat by chance,
and, for the record, padded text with an attention mask, segmentation masks with a void border and
multi-hot labels."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from support.data_checks import check
from torchdoctor.data_checks import engine

CARDINALITIES = (7, 12, 300, 2)


class Categorical(Dataset):
    """``(codes, continuous, label)``: a code per categorical column, each below its cardinality."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.codes = torch.stack([torch.randint(0, k, (n,), generator=g) for k in CARDINALITIES], 1)
        self.continuous = torch.randn(n, 5, generator=g)
        self.y = torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.codes[i], self.continuous[i], self.y[i]


class EntityEmbeddings(nn.Module):
    def __init__(self, sizes=CARDINALITIES):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(k, 4) for k in sizes])
        self.head = nn.Linear(4 * len(sizes) + 5, 3)

    def forward(self, codes, continuous):
        parts = [e(codes[:, j]) for j, e in enumerate(self.embeddings)]
        return self.head(torch.cat([*parts, continuous], 1))


def test_categorical_codes_for_an_embedding_per_column_are_not_token_ids():
    splits = {"train": DataLoader(Categorical(1000, 0), batch_size=64, shuffle=True), "val": Categorical(300, 1)}
    r = engine.run(splits, EntityEmbeddings(), {}, loss=nn.CrossEntropyLoss())
    assert r["findings"] == []  # were: token-ids-out-of-range against the first Embedding's 7 ids
    assert any("read as categorical codes" in n for n in r["notes"])


def test_codes_past_their_own_embedding_are_still_reported():
    r = check(Categorical(500, 0), EntityEmbeddings(sizes=(7, 12, 200, 2)))  # column 2 holds codes up to 299
    assert [f["kind"] for f in r["findings"]] == ["token-ids-out-of-range"]


class FewValues(Dataset):
    """Four low-cardinality values a sample (not kept in an attribute the duplicate check reads)."""

    def __init__(self, n=1000, dtype=torch.float32):
        g = torch.Generator().manual_seed(0)
        self.rows = torch.randint(0, 3, (n, 4), generator=g).to(dtype)
        self.y = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.rows[i], self.y[i]


def test_samples_of_a_few_values_are_not_called_duplicates():
    # 81 distinct rows among 1,000: they repeat by chance (fewer than DUP_MIN_ELEMENTS values)
    assert check(FewValues())["findings"] == []
    assert check(FewValues(dtype=torch.long))["findings"] == []
    assert check({"train": FewValues(), "val": FewValues(300)})["findings"] == []


class Reviews(Dataset):
    """Token ids padded with 0 to 64, an attention mask, a binary label."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.zeros(n, 64, dtype=torch.long)
        for i, length in enumerate(torch.randint(8, 64, (n,), generator=g).tolist()):
            self.ids[i, 0] = 101
            self.ids[i, 1:length] = torch.randint(1000, 5000, (length - 1,), generator=g)
        self.y = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": (self.ids[i] != 0).long(), "label": self.y[i]}


class Masks(Dataset):
    """ImageNet-normalised images, 5-class masks of 8x8 blocks with a 255 void border."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.rand(n, 3, 32, 32, generator=g)
        masks = torch.randint(0, 5, (n, 4, 4), generator=g).repeat_interleave(8, 1).repeat_interleave(8, 2)
        masks[:, :2], masks[:, :, :2] = 255, 255
        self.masks = masks

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        mean = torch.tensor([0.485, 0.456, 0.406])[:, None, None]
        std = torch.tensor([0.229, 0.224, 0.225])[:, None, None]
        return (self.images[i] - mean) / std, self.masks[i]


class MultiHot(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.rand(n, 3, 24, 24, generator=g)
        self.y = (torch.rand(n, 20, generator=g) < 0.1).float()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return (self.images[i] - 0.5) / 0.29, self.y[i]


def test_padded_text_masks_and_multi_hot_labels_are_silent():
    text = nn.Sequential(nn.Embedding(5000, 16, padding_idx=0), nn.Flatten(), nn.Linear(16 * 64, 2))
    splits = {"train": DataLoader(Reviews(400, 0), batch_size=32, shuffle=True), "val": Reviews(100, 1)}
    assert engine.run(splits, text, {}, loss=nn.CrossEntropyLoss())["findings"] == []
    fcn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 5, 1))
    splits = {"train": DataLoader(Masks(120, 0), batch_size=8, shuffle=True), "val": Masks(40, 1)}
    assert engine.run(splits, fcn, {}, loss=nn.CrossEntropyLoss(ignore_index=255))["findings"] == []
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 20))
    splits = {"train": DataLoader(MultiHot(200, 0), batch_size=32, shuffle=True), "val": MultiHot(60, 1)}
    assert engine.run(splits, cnn, {}, loss=nn.BCEWithLogitsLoss())["findings"] == []


class Tags(Dataset):
    """An image and the ids of its 1 to 3 tags (a collate or the training loop makes them multi-hot)."""

    def __init__(self, n, seed, classes=20):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.rand(n, 3, 24, 24, generator=g)
        counts = [int(c) for c in torch.randint(1, 4, (n,), generator=g)]
        # one tag the most common count: the labels of length 1 are then the most common shape
        counts = [1 if k % 2 else c for k, c in enumerate(counts)]
        self.tags = [torch.randperm(classes, generator=g)[:c] for c in counts]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return (self.images[i] - 0.5) / 0.29, self.tags[i]


def test_tag_id_lists_of_several_lengths_are_not_class_indices():
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 20))
    r = engine.run({"train": Tags(300, 0), "val": Tags(100, 1)}, cnn, {}, loss=nn.BCEWithLogitsLoss())
    assert r["findings"] == []  # was: index-labels-for-binary-loss, read from the samples with one tag
    assert all(s["labelKind"] == "other" for s in r["splits"])


class ColourFolder(Dataset):
    """An ImageFolder-like split stored class by class, whose classes differ in colour (as sky, grass and
    fur do); ``brighter`` shifts every image (a different camera: real drift)."""

    classes = [f"c{i}" for i in range(10)]

    def __init__(self, per_class, seed, brighter=0.0):
        g = torch.Generator().manual_seed(seed)
        self.targets = [c for c in range(10) for _ in range(per_class)]
        tint = (torch.tensor(self.targets, dtype=torch.float32) / 20)[:, None, None, None]
        colour = torch.tensor([1.0, 0.3, -0.5])[None, :, None, None]
        self.images = torch.rand(len(self.targets), 3, 16, 16, generator=g) * 0.5 + tint * colour + 0.2 + brighter

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return (self.images[i] - 0.45) / 0.25, self.targets[i]


def test_an_unshuffled_validation_loader_over_a_folder_sorted_by_class_is_not_drift():
    train = DataLoader(ColourFolder(200, 0), batch_size=32, shuffle=True)
    r = check({"train": train, "val": DataLoader(ColourFolder(100, 1), batch_size=32)})
    assert r["findings"] == []  # was: drift, its first 20 batches holding classes 0..6 only
    # a brighter validation camera is still drift, judged within each class both splits hold
    r = check({"train": train, "val": DataLoader(ColourFolder(100, 1, brighter=0.4), batch_size=32)})
    assert [f["kind"] for f in r["findings"]] == ["drift"]


def test_a_prefix_without_a_class_in_common_is_a_note():
    train = DataLoader(ColourFolder(200, 0), batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
    val = DataLoader(ColourFolder(100, 1), batch_size=32)
    r = check({"train": train, "val": val}, maxBatches=3)  # train: ~10 samples a class, fewer than 20
    assert r["findings"] == []
    assert any("drawn as the first batches of a DataLoader in index order" in n for n in r["notes"])
