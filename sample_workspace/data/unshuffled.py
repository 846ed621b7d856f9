"""An unshuffled training loader over images stored class by class.

``Flowers`` keeps its samples the way an ImageFolder does: every image of class 0, then every
image of class 1, and so on. The training DataLoader is built with ``shuffle=False`` (the
default), so it hands the model its batches in that order: almost every batch holds one class,
each SGD step pulls the model towards that class, and the loss swings from block to block.
Torch Doctor draws the loader's first batches, counts those of one class ("17 of 20 drawn train
batches ... hold one class") and points at the ``DataLoader(...)`` line: pass ``shuffle=True``.
The validation loader is unshuffled too, and that is right: it is not reported.

Try it::

    torchdoctor check data data/unshuffled.py
"""

import torch
from torch.utils.data import DataLoader, Dataset


class Flowers(Dataset):
    classes = ["daisy", "rose", "tulip", "iris"]

    def __init__(self, per_class: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        # sorted by class, as a folder per class is listed
        self.targets = [c for c in range(len(self.classes)) for _ in range(per_class)]
        self.images = torch.rand(len(self.targets), 3, 16, 16, generator=g)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image = self.images[index]
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return (image - 0.5) / 0.29, self.targets[index]


def torchdoctor_data():
    train = DataLoader(Flowers(100, seed=0), batch_size=16)
    val = DataLoader(Flowers(25, seed=1), batch_size=16, shuffle=False)
    return {"train": train, "val": val}
