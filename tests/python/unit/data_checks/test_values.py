"""NaN/Inf and blank samples: found with their indices, a sometimes-blank augmentation told from
stored blank samples, healthy data silent."""

from __future__ import annotations

import torch
from torch.utils.data import Dataset, TensorDataset

from support.data_checks import Images, check, kinds


class WithNaN(Images):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        if i in (5, 77):
            x = x.clone()
            x[0, 0, 0] = float("nan") if i == 5 else float("inf")
        return x, y


def test_nonfinite_features_are_found_with_their_indices():
    r = check(WithNaN())
    assert kinds(r) == ["nonfinite"]
    f = r["findings"][0]
    assert f["indices"] == [5, 77] and f["severity"] == "error" and f["details"]["values"] == 2
    assert f["source"]["line"] > 0 and f["source"]["file"].endswith("test_values.py")


def test_nan_labels_are_found():
    y = torch.rand(100)
    y[3] = float("nan")
    r = check(TensorDataset(torch.randn(100, 4), y))
    assert [f["indices"] for f in r["findings"] if f["kind"] == "nonfinite"] == [[3]]


class SometimesBlank(Images):
    """A random transform that blanks a draw with probability 5%."""

    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        if torch.rand(()) < 0.05:
            x = torch.zeros_like(x)
        return x, y


def test_augmentation_that_sometimes_blanks_is_told_apart():
    r = check(SometimesBlank(n=400))
    assert kinds(r) == ["blank-augmentation"]
    f = r["findings"][0]
    assert 0.01 < f["details"]["blankDraws"] / f["details"]["draws"] < 0.15
    assert any(h < n for h, n in f["details"]["perIndex"].values())  # redrawn: not blank every time
    assert "random transform" in f["message"]


class StoredBlank(Images):
    def __init__(self):
        super().__init__(n=200, flip=False)
        self.x[[4, 9, 150]] = 0.7


def test_stored_blank_samples_are_constant_samples():
    r = check(StoredBlank())
    assert kinds(r) == ["constant-samples"]
    assert r["findings"][0]["indices"] == [4, 9, 150]


def test_mostly_one_value_counts_as_blank_but_a_sparse_digit_does_not():
    x = torch.zeros(200, 1, 28, 28)
    x[:, 0, 10:18, 13:15] = 1.0  # a thin stroke: 16 of 784 pixels (2%): not blank
    x[7, 0] = 0.0
    x[7, 0, 0, 0] = 1.0  # one pixel: blank
    r = check(TensorDataset(x, torch.arange(200) % 4))
    assert [(f["kind"], f["indices"]) for f in r["findings"] if "sample" in f["kind"]] == [("constant-samples", [7])]


def test_healthy_images_are_silent():
    for seed in range(3):
        assert check({"train": Images(seed=seed), "val": Images(100, seed=seed + 10)})["findings"] == []


class Sparse(Dataset):
    """Bag-of-words vectors: mostly zeros by design, never blank."""

    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = (torch.rand(200, 500, generator=g) < 0.005).float()
        self.x[:, 0] = 1.0
        self.y = torch.randint(0, 2, (200,), generator=g)

    def __len__(self):
        return 200

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def test_sparse_vectors_are_not_blank():
    assert "constant-samples" not in kinds(check(Sparse()))


def test_a_loader_over_a_random_dataset_reports_blank_augmentation():
    from torch.utils.data import DataLoader

    r = check(DataLoader(SometimesBlank(n=400), batch_size=20, shuffle=True))
    assert kinds(r) == ["blank-augmentation"]
    assert "positions in the loader's stream" in r["findings"][0]["message"]


class NoSamples(Dataset):
    def __len__(self):
        return 0

    def __getitem__(self, i):
        raise IndexError(i)


def test_an_empty_split_is_an_error_not_a_pass():
    r = check({"train": Images(), "val": NoSamples()})
    assert kinds(r) == ["empty-split"] and r["verdict"] == "FINDINGS"
    f = r["findings"][0]
    assert f["split"] == "val" and f["severity"] == "error" and "length is 0" in f["message"]


def test_a_loader_that_drops_its_only_partial_batch_is_empty():
    from torch.utils.data import DataLoader

    r = check({"train": DataLoader(Images(n=10), batch_size=32, drop_last=True)})
    assert kinds(r) == ["empty-split"]
    assert "gave no sample" in r["findings"][0]["message"] and "drop_last" in r["findings"][0]["message"]
