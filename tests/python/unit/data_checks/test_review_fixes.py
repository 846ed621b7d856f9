"""Misses, false alarms and a crash found reviewing the 2026-12-06 common-shapes changes: real drift
beside a rebalanced loader, a copied sample holding one NaN, a GAN's one-folder ImageFolder, an
attention_mask of all ones, and a wrapper over a dataset whose ``len`` raises."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler

from support.data_checks import kinds
from torchdoctor.data_checks import engine


def run(splits, model=None, loss=None):
    return engine.run(splits, model, {}, loss=loss)


class Churn(Dataset):
    """Standardised features, 5 % positives one std higher."""

    def __init__(self, n=1000, seed=0, shift=0.0):
        g = torch.Generator().manual_seed(seed)
        self.y = (torch.rand(n, generator=g) < 0.05).long()
        self.x = torch.randn(n, 10, generator=g) + self.y[:, None] + shift

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def test_a_val_split_never_standardised_drifts_beside_a_rebalanced_training_loader():
    train = Churn()
    weights = (1.0 / torch.bincount(train.y).float())[train.y]
    sampler = WeightedRandomSampler(weights, len(train), generator=torch.Generator().manual_seed(0))
    loader = DataLoader(train, batch_size=64, sampler=sampler)
    assert "drift" in kinds(run({"train": loader, "val": DataLoader(Churn(300, 1, shift=2.0), batch_size=64)}))
    healthy = run({"train": loader, "val": DataLoader(Churn(300, 1), batch_size=64)})
    assert "drift" not in kinds(healthy)


class Held(Dataset):
    """Rows under a name the stored-rows reader does not know: compared on their draws."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __len__(self):
        return len(self.a)

    def __getitem__(self, i):
        return self.a[i], self.b[i]


def test_a_sample_with_one_nan_copied_into_val_is_still_a_leak():
    g = torch.Generator().manual_seed(0)
    images, labels = torch.rand(300, 3, 16, 16, generator=g), torch.randint(0, 2, (300,), generator=g)
    images[:, 0, 0, 0] = float("nan")  # one missing pixel each: not a placeholder
    r = run({"train": Held(images[:200], labels[:200]), "val": Held(images[150:], labels[150:])})
    assert "duplicates-across-splits" in kinds(r)


class Faces(Dataset):
    """An ImageFolder over one folder, as DCGAN reads CelebA: every label 0, ``classes == ["celeba"]``."""

    classes = ["celeba"]

    def __init__(self):
        self.x = torch.rand(200, 3, 16, 16) * 2 - 1

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], 0


def test_a_one_folder_image_folder_under_a_gan_bce_loss_is_not_one_class_labels():
    assert "label-imbalance" not in kinds(run({"train": Faces()}, loss=nn.BCELoss()))
    Faces.classes = ["cat", "dog"]  # a dataset of two classes whose labels are all 0 still is
    try:
        assert "label-imbalance" in kinds(run({"train": Faces()}, loss=nn.BCELoss()))
    finally:
        Faces.classes = ["celeba"]


class Tokens(Dataset):
    """12 real ids then 20 pads (0), beside an attention_mask that masks them or is all ones."""

    def __init__(self, all_ones):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.zeros(200, 32, dtype=torch.long)
        self.ids[:, :12] = torch.randint(1, 1000, (200, 12), generator=g)
        self.mask = torch.ones_like(self.ids) if all_ones else (self.ids != 0).long()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "labels": i % 2}


def test_padding_beside_an_attention_mask_of_all_ones_is_still_reported():
    assert "padding-share" in kinds(run({"train": Tokens(all_ones=True)}))
    assert "padding-share" not in kinds(run({"train": Tokens(all_ones=False)}))


class NoLength(Dataset):
    def __init__(self, n):
        self.images = torch.rand(n, 3, 8, 8)

    def __len__(self):
        raise NotImplementedError

    def __getitem__(self, i):
        return self.images[i], 0


class Sized(Dataset):
    """A wrapper that knows the length its dataset cannot tell."""

    def __init__(self, dataset, n):
        self.dataset, self.n = dataset, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.dataset[i]


def test_a_wrapped_dataset_whose_len_raises_does_not_end_the_check():
    r = run({"train": Sized(NoLength(100), 100), "val": Sized(NoLength(50), 50)})
    assert "findings" in r


def test_weights_per_sample_are_not_undone_by_class():
    """Weights that favour the higher rows within a class (not one weight per class) move the class's
    own features: drift is not judged then (a note), as it was not before the review."""
    train = Churn()
    weights = 1.0 + 50.0 * (train.x[:, 0] > 1.0).float() + torch.rand(len(train)) * 1e-3
    sampler = WeightedRandomSampler(weights, len(train), generator=torch.Generator().manual_seed(0))
    loader = DataLoader(train, batch_size=64, sampler=sampler)
    r = run({"train": loader, "val": DataLoader(Churn(300, 1), batch_size=64)})
    assert "drift" not in kinds(r) and any("drift against train not judged" in n for n in r["notes"])
