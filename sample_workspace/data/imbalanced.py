"""Imbalanced labels: 97% of the transactions are legitimate.

A classifier that always answers "legit" scores 97% accuracy on ``Transactions``: the accuracy
that looks good says nothing. Torch Doctor shows the label histogram and the majority baseline
("always predicting `0 (legit)` scores 97%") and suggests balanced accuracy / F1 and a weighted
loss or a ``WeightedRandomSampler``.

Try it::

    torchdoctor check data data/imbalanced.py::Transactions
"""

import torch
from torch.utils.data import Dataset


class Transactions(Dataset):
    classes = ["legit", "fraud"]

    def __init__(self, n: int = 1000, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.labels = (torch.rand(n, generator=g) < 0.03).long()
        self.features = torch.randn(n, 12, generator=g) + self.labels[:, None] * 0.8

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.features[index], self.labels[index]
