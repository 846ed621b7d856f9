"""An unshuffled training DataLoader over data stored class by class (shuffling.py): caught on the
training split drawn in index order, silent on a shuffled loader, a validation loader, interleaved
classes, regression targets, a single class and a dataset drawn without a loader."""

from __future__ import annotations

import textwrap

import torch
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    TensorDataset,
    WeightedRandomSampler,
)

from support.data_checks import check, kinds
from torchdoctor.data_checks import engine, loader_source, shuffling

KIND = "unshuffled-class-runs"


def by_class(per_class=160, classes=4, labels=None):
    """Samples stored class by class: every sample of class 0, then of class 1, ..."""
    y = torch.arange(classes).repeat_interleave(per_class) if labels is None else torch.as_tensor(labels)
    return TensorDataset(torch.randn(len(y), 6, generator=torch.Generator().manual_seed(0)), y)


class Folder(torch.utils.data.Dataset):
    """An ImageFolder-like dataset: ``classes``, ``targets`` sorted by class, images."""

    classes = ["cat", "dog", "fox"]

    def __init__(self, per_class=1000):
        self.targets = [c for c in range(3) for _ in range(per_class)]
        self.images = torch.rand(len(self.targets), 3, 8, 8, generator=torch.Generator().manual_seed(1))

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return (self.images[i] - 0.5) / 0.29, self.targets[i]


def test_a_sorted_unshuffled_training_loader_is_caught():
    r = check(DataLoader(by_class(), batch_size=32))
    assert kinds(r) == [KIND]
    f = r["findings"][0]
    assert f["severity"] == "warning" and f["split"] == "train"
    assert f["message"].startswith("20 of 20 drawn train batches (batch size 32) hold one class")
    assert "change class 3 times" in f["message"] and "shuffle=False" in f["message"]
    assert "DataLoader(..., shuffle=True)" in f["message"]
    assert f["details"]["batches"] == 20 and f["details"]["singleClass"] == 20 and f["details"]["batchSize"] == 32


def test_every_drawn_batch_of_one_class_is_caught_from_the_datasets_targets():
    # 3,000 images of 3 classes, 20 batches of 32: all 640 samples drawn are class 0
    r = check(DataLoader(Folder(), batch_size=32))
    assert kinds(r) == [KIND]
    message = r["findings"][0]["message"]
    assert message.startswith("all 20 drawn train batches (batch size 32) hold class `0 (cat)` only")
    assert "the dataset's labels have 3 classes" in message


def test_a_concatenation_of_per_class_datasets_and_a_sequential_batch_sampler():
    parts = [TensorDataset(torch.randn(100, 5), torch.full((100,), c)) for c in range(5)]
    assert kinds(check(DataLoader(ConcatDataset(parts), batch_size=25))) == [KIND]
    ds = by_class()
    batches = BatchSampler(SequentialSampler(ds), batch_size=32, drop_last=False)
    assert kinds(check({"train_loader": DataLoader(ds, batch_sampler=batches)})) == [KIND]


def test_the_same_loader_shuffled_or_randomly_sampled_is_silent():
    ds = by_class()
    weights = torch.ones(len(ds))
    for loader in (
        DataLoader(ds, batch_size=32, shuffle=True),
        DataLoader(ds, batch_size=32, sampler=RandomSampler(ds)),
        DataLoader(ds, batch_size=32, sampler=WeightedRandomSampler(weights, len(ds))),
        DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True)),
        DataLoader(ds, batch_sampler=BatchSampler(RandomSampler(ds), batch_size=32, drop_last=False)),
    ):
        assert check(loader)["findings"] == [], type(loader.sampler).__name__


def test_validation_and_test_loaders_are_never_reported():
    ds = by_class()
    train = DataLoader(by_class(labels=torch.arange(640) % 4), batch_size=32, shuffle=True)
    r = check({"train": train, "val": DataLoader(ds, batch_size=32), "test": DataLoader(ds, batch_size=32)})
    assert KIND not in kinds(r)
    # a second split not named for training is not the training split either
    r = check({"train": train, "holdout": DataLoader(ds, batch_size=32)})
    assert KIND not in kinds(r)
    assert not shuffling._training(engine.Context([_split("train_eval")]), _split("train_eval"))


def _split(name):
    return engine.Split(name, engine.Draws(name, "loader", None), engine.SplitStats(name))


def test_interleaved_classes_in_index_order_are_silent():
    round_robin = torch.arange(640) % 4  # 0, 1, 2, 3, 0, 1, ...: every batch holds every class
    assert check(DataLoader(by_class(labels=round_robin), batch_size=32))["findings"] == []
    pairs = (torch.arange(640) // 2) % 4  # short runs of two: still many classes a batch
    assert check(DataLoader(by_class(labels=pairs), batch_size=32))["findings"] == []


def test_a_rare_class_in_random_order_is_not_a_run():
    # 1% positives in random order: most batches of 32 hold one class by chance, the labels are not grouped
    g = torch.Generator().manual_seed(3)
    y = (torch.rand(640, generator=g) < 0.01).long()
    y[::97] = 1  # a few positives for certain
    assert KIND not in kinds(check(DataLoader(by_class(labels=y), batch_size=32)))


def test_regression_targets_are_silent():
    ordered = torch.linspace(0, 1, 640)  # float targets sorted by value
    assert check(DataLoader(by_class(labels=ordered), batch_size=32))["findings"] == []
    ages = torch.arange(640) // 16  # integer ages, sorted, with a regression loss given
    r = engine.run({"train": DataLoader(by_class(labels=ages), batch_size=32)}, loss=torch.nn.L1Loss())
    assert r["findings"] == []
    # ... or with a one-output model and no loss (read as regression by the label checks too)
    r = check(DataLoader(by_class(labels=ages % 40), batch_size=32), torch.nn.Linear(6, 1))
    assert KIND not in kinds(r)


def test_a_single_class_and_a_dataset_drawn_directly_are_silent():
    one = by_class(labels=torch.zeros(640, dtype=torch.long))
    assert check(DataLoader(one, batch_size=32))["findings"] == []
    assert KIND not in kinds(check(by_class()))  # no loader: nothing said about shuffling
    assert check(DataLoader(by_class(), batch_size=1))["findings"] == []  # no batches of several samples


def test_too_few_batches_are_no_evidence():
    assert KIND not in kinds(check(DataLoader(by_class(per_class=20), batch_size=32)))  # 2 full batches


def test_the_finding_points_at_the_loaders_line(tmp_path):
    file = tmp_path / "data.py"
    file.write_text(
        textwrap.dedent(
            """\
            from torch.utils.data import DataLoader


            def torchdoctor_data(train_ds, val_ds):
                val_loader = DataLoader(val_ds, batch_size=32)
                train_loader = DataLoader(
                    train_ds, batch_size=32, shuffle=False
                )
                return {"train": train_loader, "val": val_loader}
            """
        )
    )
    origin = {"file": str(file), "line": 4}
    assert loader_source.loader_line(origin, "train") == {"file": str(file), "line": 6}
    assert loader_source.loader_line(origin, "val") == {"file": str(file), "line": 5}
    assert loader_source.loader_line({"file": str(file), "line": 1}, "train") is None  # not a function's line
    ds = by_class()
    r = engine.run({"train": DataLoader(ds, batch_size=32)}, origin=origin)
    assert r["findings"][0]["source"] == {"file": str(file), "line": 6}
