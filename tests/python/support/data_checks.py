"""Datasets for the data-check tests: healthy ones of every shape, and one helper to run the checks."""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

from torchdoctor.data_checks import engine


def kinds(result: dict) -> list:
    return sorted(f["kind"] for f in result["findings"])


def check(splits, model=None, **options) -> dict:
    if not isinstance(splits, dict):
        splits = {"train": splits}
    return engine.run(splits, model, options)


class Images(Dataset):
    """Normalised C x H x W images, balanced labels, an optional random flip."""

    def __init__(self, n=300, seed=0, channels=3, size=16, classes=4, flip=True, shift=0.0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.rand(n, channels, size, size, generator=g) + shift
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.flip = flip

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        x = self.x[i]
        if self.flip and torch.rand(()) < 0.5:
            x = x.flip(-1)
        return (x - 0.5) / 0.29, self.y[i]


class Vectors(Dataset):
    def __init__(self, n=300, seed=0, features=8, scale=1.0, offset=0.0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, features, generator=g) * scale + offset
        self.y = torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def cnn(in_channels=3, classes=4):
    return torch.nn.Sequential(
        torch.nn.Conv2d(in_channels, 4, 3),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, classes),
    )
