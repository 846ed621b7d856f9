"""A drifted validation set (seed 003): the validation images come from another camera.

``Scans`` builds the training images from one device and the validation images from a brighter
one with more contrast, and normalises both with the training statistics. The model is tuned on
one distribution and scored on another.

Try it::

    torchdoctor check data data/drifted_val.py

Torch Doctor compares each channel's per-sample means between train and val (mean shift in
training standard deviations, std ratio, two-sample Kolmogorov-Smirnov) and names the channels
that moved.
"""

import torch
from torch.utils.data import Dataset


class Scans(Dataset):
    def __init__(self, n: int, brightness: float = 0.0, contrast: float = 1.0, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        base = 0.4 + 0.1 * torch.rand(n, 3, 1, 1, generator=g)
        self.images = ((base + 0.1 * torch.randn(n, 3, 24, 24, generator=g)) * contrast + brightness).clamp(0, 1)
        self.labels = torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return (self.images[index] - 0.45) / 0.12, self.labels[index]


def torchdoctor_data():
    return {"train": Scans(600, seed=0), "val": Scans(200, brightness=0.15, contrast=1.2, seed=1)}
