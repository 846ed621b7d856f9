"""Unnormalised features: raw measurements fed straight to an MLP.

``HousePrices`` returns rows of (living area in m2, year built, distance to centre in m, rooms)
as they are: values in the hundreds and thousands next to single digits. Large inputs saturate
activations, and one learning rate cannot suit features whose scales differ by 1000x.

Try it::

    torchdoctor check data data/unnormalised.py::HousePrices

Torch Doctor lists the features whose mean or std is far above 1 and says to standardise them
with the training split's statistics (fitted after the split).
"""

import numpy as np
import torch
from torch.utils.data import Dataset


class HousePrices(Dataset):
    def __init__(self, n: int = 800, seed: int = 0):
        rng = np.random.default_rng(seed)
        area = rng.normal(95, 30, n).clip(20)
        year = rng.integers(1900, 2024, n).astype(float)
        distance = rng.gamma(2.0, 2500.0, n)
        rooms = rng.integers(1, 7, n).astype(float)
        self.x = np.stack([area, year, distance, rooms], 1).astype(np.float32)
        self.y = (area * 3000 - distance * 5 + rng.normal(0, 1e4, n)).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return torch.from_numpy(self.x[index]), torch.tensor(self.y[index])
