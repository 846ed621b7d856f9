"""Channels last (seed 003): HxWxC images fed to a model whose first conv reads CxHxW.

The images come as numpy arrays decoded the usual way (height, width, channel) and are turned
into tensors with ``torch.from_numpy`` instead of ``ToTensor()``. With 32x32x3 images and a
Conv2d(3, ...) the batch is (N, 32, 32, 3): the conv raises only when the sizes disagree; with
other sizes it can run on the wrong axes.

Try it::

    torchdoctor check data data/channels_last.py

``torchdoctor_data()`` returns the splits and the model, so Torch Doctor compares the samples'
layout with ``SmallCNN.features.0`` (a Conv2d expecting 3 channels first) and says so, with
the fix: ``x.permute(2, 0, 1)`` per sample or ``ToTensor()``.
"""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset


class PhotoPatches(Dataset):
    def __init__(self, n: int = 400, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.images = rng.random((n, 32, 32, 3), dtype=np.float32)  # (H, W, C), as decoded
        self.labels = rng.integers(0, 4, n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        x = torch.from_numpy((self.images[index] - 0.5) / 0.29)  # still (32, 32, 3)
        return x, int(self.labels[index])


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def torchdoctor_data():
    return {"train": PhotoPatches(400, seed=0), "val": PhotoPatches(100, seed=1), "model": SmallCNN()}
