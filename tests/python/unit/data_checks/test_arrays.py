"""What a sample is made of (arrays.split_xy): a file name before the image, several views of one image."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import check, kinds
from torchdoctor.data_checks.arrays import split_xy


class Photos(Dataset):
    """(file name, image, class) as a detection or retrieval dataset returns it; ``scale``: 255 gives
    whole-number floats 0..255, a missing ``/ 255``."""

    def __init__(self, n=120, seed=0, scale=1.0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(0, 256, (n, 3, 16, 16), generator=g).float() / 255 * scale
        self.y = torch.randint(0, 4, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return f"photos/{i:04d}.jpg", (self.x[i] - 0.5) / 0.25 if self.x.max() <= 1 else self.x[i], int(self.y[i])


class TwoViews(Dataset):
    """A contrastive pretext: ``[query, key]``, two random augmentations of one image, and its class."""

    def __init__(self, n=120, seed=0, copies=1):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n // copies, 3, 16, 16, generator=g).repeat(copies, 1, 1, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        im = self.x[i]
        q = im.flip(-1) if torch.rand(()) < 0.5 else im
        k = im + 0.1 * torch.randn_like(im)
        return [q, k], i % 4


def test_a_name_first_leaves_the_image_as_features_and_the_last_item_as_label():
    image = torch.zeros(3, 8, 8)
    x, y, how = split_xy(("a.png", image, 3))
    assert x is image and y == 3 and "sample[0] is text" in how
    x, y, _ = split_xy(("a.png", image))
    assert x is image and y is None
    x, y, _ = split_xy(("a sentence", 1))  # text and its class: no image to read
    assert x == "a sentence" and y == 1


def test_named_photos_are_checked_and_their_0_255_floats_found():
    healthy = check({"train": Photos(), "val": Photos(seed=1)})
    assert healthy["findings"] == [] and healthy["splits"][0]["layout"] == "chw"
    assert kinds(check(Photos(scale=255))) == ["uint8-range-floats"]
    assert kinds(check(DataLoader(Photos(scale=255), batch_size=16))) == ["uint8-range-floats"]


def test_two_views_are_one_sample():
    x, y, how = split_xy(([torch.zeros(3, 8, 8), torch.ones(3, 8, 8)], 1))
    assert x.shape == (3, 8, 8) and y == 1 and "2 views" in how
    r = check(TwoViews())
    assert r["findings"] == [] and r["splits"][0]["sampled"] == 120 and r["splits"][0]["layout"] == "chw"
    r = check(DataLoader(TwoViews(), batch_size=16))
    assert r["findings"] == [] and r["splits"][0]["sampled"] == 120


def test_images_copied_within_a_split_are_still_found_through_their_views():
    """The two views differ (random augmentations) but the same image stored twice is a duplicate:
    only the flip is random here, so half the copies draw the same first view."""
    r = check(TwoViews(copies=2))
    assert "duplicates-within-split" in kinds(r)
