"""Label histogram, imbalance with the majority baseline, out-of-range labels, one output for many
classes, labels unseen in training; labels that are numpy strings are read like Python strings."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset, WeightedRandomSampler

from support.data_checks import check, kinds
from torchdoctor.data_checks import engine


def labelled(y, features=6):
    y = torch.as_tensor(y)
    return TensorDataset(torch.randn(len(y), features), y)


class Named(TensorDataset):
    classes = ["cat", "dog"]


def test_imbalance_names_the_majority_baseline():
    y = torch.tensor([0] * 190 + [1] * 10)
    r = check(Named(torch.randn(200, 6), y))
    assert kinds(r) == ["label-imbalance"]
    f = r["findings"][0]
    assert "always predicting `0 (cat)` scores 95%" in f["message"]
    assert f["details"]["histogram"] == {"0 (cat)": 190, "1 (dog)": 10}
    assert r["splits"][0]["labels"] == {"0 (cat)": 190, "1 (dog)": 10}


def test_ratio_imbalance_with_many_classes():
    y = [0] * 100 + [1] * 100 + [2] * 100 + [3] * 5
    assert kinds(check(labelled(y))) == ["label-imbalance"]


def test_balanced_and_mildly_imbalanced_labels_are_silent():
    assert check(labelled(torch.arange(300) % 3))["findings"] == []
    assert check(labelled([0] * 140 + [1] * 60))["findings"] == []  # 70/30


def test_labels_outside_the_heads_outputs():
    y = torch.arange(200) % 5  # 0..4 for a 4-output head
    r = check(labelled(y), torch.nn.Linear(6, 4))
    assert kinds(r) == ["labels-out-of-range"]
    assert r["findings"][0]["indices"][:2] == [4, 9]


def test_labels_numbered_from_one():
    r = check(labelled(torch.arange(200) % 4 + 1), torch.nn.Linear(6, 4))
    assert "numbered from 1" in r["findings"][0]["message"]


def test_ignore_index_is_never_out_of_range():
    y = torch.arange(200) % 4
    y[::10] = -100
    assert check(labelled(y), torch.nn.Linear(6, 4))["findings"] == []


def test_one_output_for_many_classes():
    r = engine.run({"train": labelled(torch.arange(200) % 5)}, torch.nn.Linear(6, 1), {}, loss=nn.CrossEntropyLoss())
    assert kinds(r) == ["one-output-many-classes"]
    assert check(labelled(torch.arange(200) % 2), torch.nn.Linear(6, 1))["findings"] == []  # binary: fine


def ages(n, seed):
    """Whole years, skewed (many 20-30, few above 80): imbalanced and unseen "classes" if read as such."""
    g = torch.Generator().manual_seed(seed)
    return labelled((torch.randn(n, generator=g).abs() * 15 + 18).long())


@pytest.mark.parametrize("loss", [nn.L1Loss(), nn.MSELoss, nn.SmoothL1Loss(), nn.HuberLoss(), TF.l1_loss, None])
def test_integer_regression_targets_are_not_classes(loss):
    r = engine.run({"train": ages(300, 0), "val": ages(100, 1)}, nn.Linear(6, 1), {}, loss=loss)
    assert r["findings"] == []
    assert any("read as regression targets" in n for n in r["notes"])


def test_classes_past_the_head_still_fire_beside_a_regression_rule():
    y = torch.arange(300) % 15  # 0..14 for a 10-output head
    r = engine.run({"train": labelled(y)}, nn.Linear(6, 10), {}, loss=nn.CrossEntropyLoss())
    assert kinds(r) == ["labels-out-of-range"]
    r = engine.run({"train": labelled(torch.arange(300) % 3)}, nn.Linear(6, 1), {}, loss=nn.NLLLoss())
    assert kinds(r) == ["one-output-many-classes"]


def test_labels_unseen_in_training():
    r = check({"train": labelled(torch.arange(300) % 3), "val": labelled(torch.arange(60) % 4)})
    assert kinds(r) == ["unseen-labels"]
    assert r["findings"][0]["split"] == "val" and r["findings"][0]["indices"][:2] == [3, 7]


def test_labels_unseen_in_a_training_loader_drawn_with_replacement_are_not_judged():
    """As many draws as samples with replacement need not see every training class: not 'fully drawn'."""
    train = labelled(torch.arange(300) % 4)
    weights = (torch.arange(300) % 4 != 3).double()  # class 3 is in train but never drawn
    sampler = WeightedRandomSampler(weights, num_samples=300, generator=torch.Generator().manual_seed(0))
    loaders = {"train": DataLoader(train, batch_size=50, sampler=sampler), "val": labelled(torch.arange(60) % 4)}
    assert check(loaders)["findings"] == []
    whole = {"train": DataLoader(train, batch_size=50), "val": labelled(torch.arange(60) % 5)}
    assert kinds(check(whole)) == ["unseen-labels"]  # drawn in full, without replacement: judged


def test_one_hot_labels_are_read_as_classes():
    y = torch.nn.functional.one_hot(torch.tensor([0] * 190 + [1] * 10), 2).float()
    assert kinds(check(labelled(y))) == ["label-imbalance"]


class NamedLabels(Dataset):
    """Feature rows labelled by class name, as numpy strings (read from an array of names) or as
    Python strings."""

    def __init__(self, numpy_names: bool):
        names = np.array(["cat", "dog", "eel"])
        self.x = torch.randn(300, 3, 8, 8, generator=torch.Generator().manual_seed(0))
        self.names = names[np.arange(300) % 3]
        self.numpy_names = numpy_names

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        name = self.names[i]
        return self.x[i], name if self.numpy_names else str(name)


def test_numpy_string_labels_are_read_like_python_strings():
    numpy_names = check({"train": NamedLabels(numpy_names=True)}, galleryImages=0)
    python_names = check({"train": NamedLabels(numpy_names=False)}, galleryImages=0)
    assert not any("could not" in n or "raised" in n for n in numpy_names["notes"])
    assert kinds(numpy_names) == kinds(python_names)
    assert numpy_names["notes"] == python_names["notes"]


def test_segmentation_masks_are_said_to_be_unchecked():
    """H x W integer masks are no class index: with no conv head to compare them with (a Linear model), a
    note lists their values (a 0/255 mask would otherwise pass unsaid); integer keypoint rows (17, 3) and
    class indices get no such note (test_masks.py: masks against a segmentation head)."""
    masks = TensorDataset(torch.rand(20, 3, 16, 24), torch.randint(0, 2, (20, 16, 24)) * 255)
    keypoints = TensorDataset(torch.rand(20, 3, 16, 24), torch.randint(0, 50, (20, 17, 3)))
    r = check({"train": masks, "val": keypoints, "test": labelled([0, 1, 5] * 10)}, nn.Linear(6, 2))
    assert any(
        n.startswith("train: labels are H x W masks (values 0, 255): pixel classes not checked") for n in r["notes"]
    )
    assert not any("masks" in n for n in r["notes"] if not n.startswith("train"))
    assert kinds(r) == ["labels-out-of-range"] and r["findings"][0]["split"] == "test"
