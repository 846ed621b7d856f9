"""The two-sample KS statistic and the drift finding: a shifted split is named, a split from the
same distribution is silent over many seeds."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import TensorDataset

from support.data_checks import Images, Vectors, check, kinds
from torchdoctor.data_checks.drift import ks_2samp


def test_ks_statistic_and_p_value():
    a = np.arange(100.0)
    assert ks_2samp(a, a) == (0.0, 1.0)
    d, p = ks_2samp(a, a + 1000)
    assert d == 1.0 and p < 1e-20
    rng = np.random.default_rng(0)
    d, p = ks_2samp(rng.normal(size=500), rng.normal(size=400))
    assert d < 0.1 and p > 0.01
    d, _ = ks_2samp(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0, 5.0]))
    assert d == 0.5  # by hand: the CDFs differ most between 1 and 2


def test_shifted_validation_images():
    r = check({"train": Images(300, seed=0), "val": Images(100, seed=1, shift=0.3)})
    assert kinds(r) == ["drift"]
    f = r["findings"][0]
    assert f["split"] == "val" and len(f["details"]["features"]) == 3 and f["details"]["features"][0]["shift"] > 0.5


def test_shifted_features():
    r = check({"train": Vectors(400, seed=0), "test": Vectors(200, seed=1, offset=1.5)})
    assert kinds(r) == ["drift"]


def test_scale_drift():
    g = torch.Generator().manual_seed(0)
    train = TensorDataset(torch.randn(400, 4, generator=g), torch.arange(400) % 2)
    val = TensorDataset(torch.randn(200, 4, generator=g) * 3, torch.arange(200) % 2)
    assert kinds(check({"train": train, "val": val})) == ["drift"]


def test_same_distribution_is_silent():
    for seed in range(5):
        r = check({"train": Vectors(500, seed=seed), "val": Vectors(100, seed=seed + 100)})
        assert r["findings"] == [], r["findings"]


class CifarRecipe(torch.utils.data.Dataset):
    """uint8 H x W x C colour images with a spread of brightness between images; the training split
    pads by 4 and crops back to 32 at random, and flips (the usual CIFAR recipe), the test split not."""

    def __init__(self, n, seed, train, brighter=0.0):
        g = torch.Generator().manual_seed(seed)
        blobs = torch.rand(n, 4, 4, 3, generator=g).repeat_interleave(8, 1).repeat_interleave(8, 2)
        tint = torch.rand(n, 1, 1, 3, generator=g)
        x = 0.6 * blobs + 0.4 * tint + 0.08 * torch.randn(n, 32, 32, 3, generator=g) + brighter
        self.data = (x.clamp(0, 1) * 255).to(torch.uint8)
        self.targets = torch.randint(0, 10, (n,), generator=g)
        self.train = train

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        img = self.data[i].permute(2, 0, 1).float() / 255
        if self.train:
            padded = torch.nn.functional.pad(img, (4, 4, 4, 4))
            top, left = (int(v) for v in torch.randint(0, 9, (2,)))
            img = padded[:, top : top + 32, left : left + 32]
            if torch.rand(()) < 0.5:
                img = img.flip(-1)
        mean = torch.tensor([0.4914, 0.4822, 0.4465]).view(3, 1, 1)
        std = torch.tensor([0.2023, 0.1994, 0.2010]).view(3, 1, 1)
        return (img - mean) / std, self.targets[i]


def test_padding_crop_augmentation_of_train_alone_is_not_drift():
    # the black borders lower train's per-image means by ~0.6 of their std: a false alarm before
    r = check({"train": CifarRecipe(800, 0, train=True), "test": CifarRecipe(400, 1, train=False)})
    assert r["findings"] == [], r["findings"]


def test_real_drift_is_still_found_when_train_is_augmented():
    r = check({"train": CifarRecipe(800, 0, train=True), "test": CifarRecipe(400, 1, train=False, brighter=0.25)})
    assert kinds(r) == ["drift"]
    assert "Only train has random transforms" in r["findings"][0]["message"]
