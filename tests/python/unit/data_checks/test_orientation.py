"""Height and width swapped between splits: reported only when every sample of both splits has one
non-square shape and one split's is the other's transposed."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from support.data_checks import check, kinds


class Frames(Dataset):
    """Normalised video frames resized to (height, width), as a transform would; an optional transpose
    stands for Resize(img.size) fed PIL's (width, height)."""

    def __init__(self, n=40, height=24, width=40, seed=0, transpose=False, channels_last=False):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 3, height, width, generator=g)
        self.y = torch.arange(n) % 4
        self.transpose, self.channels_last = transpose, channels_last

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        x = self.x[i].transpose(1, 2) if self.transpose else self.x[i]
        return (x.permute(1, 2, 0) if self.channels_last else x), self.y[i]


class Photos(Dataset):
    """Landscape photos with a few portrait ones: their shapes transpose by nature."""

    def __init__(self, n=40):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        shape = (3, 40, 24) if i % 5 == 0 else (3, 24, 40)
        return torch.randn(*shape, generator=g), i % 3


def test_a_transposed_validation_split_is_a_warning():
    r = check({"train": Frames(), "val": Frames(seed=1, transpose=True)})
    assert kinds(r) == ["height-width-swapped"]
    f = r["findings"][0]
    assert f["severity"] == "warning" and f["split"] == "val" and f["count"] == 40
    assert f["details"] == {"shape": [3, 40, 24], "trainShape": [3, 24, 40]}
    assert "(H, W) = (24, 40)" in f["message"] and "Resize(img.size)" in f["message"]


def test_through_loaders_too():
    r = check(
        {
            "train": DataLoader(Frames(), batch_size=8),
            "test": DataLoader(Frames(seed=2, transpose=True), batch_size=8),
        }
    )
    assert kinds(r) == ["height-width-swapped"] and r["findings"][0]["split"] == "test"


def test_grayscale_and_channels_last_images_are_compared_in_their_own_layout():
    gray = {"train": TensorDataset(torch.randn(30, 20, 36)), "val": TensorDataset(torch.randn(30, 36, 20))}
    assert kinds(check(gray)) == ["height-width-swapped"]
    nhwc = {"train": Frames(channels_last=True), "val": Frames(seed=1, transpose=True, channels_last=True)}
    assert kinds(check(nhwc)) == ["height-width-swapped"]  # non-square float (H, W, 3): no channels-last warning


def test_what_shapes_do_not_prove_stays_silent():
    square = {"train": Frames(height=32, width=32), "val": Frames(height=32, width=32, seed=1)}
    assert check(square)["findings"] == []  # square images never tell
    same = {"train": Frames(), "val": Frames(seed=1)}
    assert check(same)["findings"] == []
    other_size = {"train": Frames(), "val": Frames(seed=1, height=48, width=80)}
    assert check(other_size)["findings"] == []  # another resolution, not a transpose
    mixed = {"train": Photos(), "val": Frames(seed=1, transpose=True)}
    assert "height-width-swapped" not in kinds(check(mixed))  # train's own shapes vary: portrait photos
    layouts = {"train": Frames(), "val": Frames(seed=1, transpose=True, channels_last=True)}
    assert "height-width-swapped" not in kinds(check(layouts))
