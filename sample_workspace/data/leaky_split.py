"""A leaky split (seed 000): augmented copies made before the split end up in train and test.

The images are "augmented" by appending flipped copies to the array, *then* split at random:
a test image's flip partner is in train (and some images were scraped twice, so exact copies
sit on both sides). The test score rewards memory.

Try it::

    torchdoctor check data data/leaky_split.py

Torch Doctor hashes every stored row (``TensorDataset`` behind the ``random_split`` subsets) and
reports the test samples that are byte-for-byte also in train, with the pairs of indices.
Fix: deduplicate first, split, and only then augment the training split.
"""

import torch
from torch.utils.data import TensorDataset, random_split


def torchdoctor_data():
    g = torch.Generator().manual_seed(0)
    images = torch.rand(500, 1, 16, 16, generator=g)
    labels = torch.randint(0, 5, (500,), generator=g)
    scraped_twice = torch.arange(0, 500, 10)  # 50 images downloaded twice
    images = torch.cat([images, images[scraped_twice]])
    labels = torch.cat([labels, labels[scraped_twice]])
    full = TensorDataset((images - 0.5) / 0.29, labels)
    train, test = random_split(full, [440, 110], generator=g)
    return {"train": train, "test": test}
