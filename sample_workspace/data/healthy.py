"""Healthy data: what the data checks must stay silent on.

Normalised channel-first images with a random flip, balanced labels inside the model's output
size, train/val/test drawn from one distribution with no shared samples, float32 everywhere.

Try it::

    torchdoctor check data data/healthy.py     # PASS, exit status 0
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Shapes(Dataset):
    def __init__(self, n: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 4, (n,), generator=g)
        self.images = torch.rand(n, 3, 20, 20, generator=g) * 0.5 + self.labels[:, None, None, None] * 0.1

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image = self.images[index]
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return (image - 0.4) / 0.16, self.labels[index]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.conv(x).mean((2, 3)))


def torchdoctor_data():
    return {
        "train": DataLoader(Shapes(600, seed=0), batch_size=32, shuffle=True),
        "val": Shapes(200, seed=1),
        "test": Shapes(200, seed=2),
        "model": Net(),
    }
