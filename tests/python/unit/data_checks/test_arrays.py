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
    x, y, _ = split_xy(("a.png", image))  # two items: text and its label, as (text, label vector) is
    assert x == "a.png" and y is image
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


class Boxes(Dataset):
    """Images of one size with a target dict of boxes and their class ids per image, batched by a collate
    that keeps the images as a tuple (``tuple(zip(*batch))``, as detection training scripts do)."""

    def __init__(self, n=48, nan_at=None):
        g = torch.Generator().manual_seed(5)
        self.x = torch.rand(n, 3, 20, 20, generator=g)
        if nan_at is not None:
            self.x[nan_at, :, 2:6, 2:6] = float("nan")
        self.counts = torch.randint(1, 4, (n,), generator=g).tolist()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        k = self.counts[i]
        corners = torch.arange(k, dtype=torch.float32)[:, None].repeat(1, 4) + torch.tensor([0.0, 0.0, 6.0, 6.0])
        return self.x[i], {"boxes": corners, "labels": torch.arange(1, k + 1)}


def per_image(batch):
    return tuple(zip(*batch))


def test_a_tuple_of_images_batched_with_their_targets_is_no_set_of_views():
    images = tuple(torch.zeros(3, 8, 8) for _ in range(4))
    targets = tuple({"boxes": torch.zeros(1, 4), "labels": torch.ones(1)} for _ in range(4))
    x, _, how = split_xy((images, targets))
    assert x is images and "views" not in how
    x, _, how = split_xy((images[:3], (1, 0, 2)))  # three 3-channel images, three labels: still images
    assert type(x) is tuple and "views" not in how
    r = check(DataLoader(Boxes(nan_at=7), batch_size=8, collate_fn=per_image))
    assert kinds(r) == ["nonfinite"] and r["findings"][0]["indices"] == [7]
    split = r["splits"][0]
    assert split["sampled"] == 48 and split["shape"] == [3, 20, 20] and split["labelKind"] == "boxes"


def test_views_in_a_batch_are_batches_of_the_labels_length():
    q, k = torch.zeros(2, 3, 8, 8), torch.ones(2, 3, 8, 8)
    x, y, how = split_xy(([q, k], torch.tensor([0, 1])))  # two views of a batch of two
    assert x is q and "2 views" in how


def test_text_with_a_label_vector_keeps_the_text_as_features():
    """(comment, multi-hot labels): the vector is the label, not features to check."""
    labels = torch.tensor([0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    x, y, _ = split_xy(("a comment", labels))
    assert x == "a comment" and y is labels
    x, y, _ = split_xy((["one", "two"], torch.zeros(2, 6)))  # the batch of it
    assert x == ["one", "two"]
    x, y, _ = split_xy(("a.png", torch.zeros(8, 8), 2))  # a name, an H x W image and its class
    assert x.shape == (8, 8) and y == 2
    x, y, _ = split_xy(("row7", torch.zeros(10), 2))  # a 1-D second item is no image
    assert x == "row7"
