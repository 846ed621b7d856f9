"""Review of the unshuffled-class-runs commit (6adc4a3): each test fails on the reviewed code.

An unshuffled val loader over data stored in random order (CIFAR-100's test set: 100 classes, a few
samples of each drawn) is a random subset: its drift is judged whole, not within classes (it was
left unjudged); a ``target_transform`` that maps 20 classes to one-vs-rest leaves ``targets`` with
shares that are not the labels drawn (a random order was called class runs); the only unshuffled
``DataLoader(...)`` call in ``torchdoctor_data`` that is the val loader is not the line of the
training loader's finding; a categorical code past its own column's Embedding is said per column
(it was said against the first Embedding, with every row counted)."""

from __future__ import annotations

import textwrap

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from support.data_checks import check, kinds
from torchdoctor.data_checks import engine, loader_source

KIND = "unshuffled-class-runs"


class Stored(Dataset):
    """Images with ``targets``; ``order`` "random" (CIFAR's storage) or "sorted" (an ImageFolder's)."""

    def __init__(self, per_class, classes, seed=0, shift=0.0, order="random"):
        g = torch.Generator().manual_seed(seed)
        targets = torch.arange(classes).repeat_interleave(per_class)
        if order == "random":
            targets = targets[torch.randperm(len(targets), generator=torch.Generator().manual_seed(7))]
        self.targets = targets.tolist()
        self.images = torch.rand(len(targets), 3, 8, 8, generator=g) + shift

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return (self.images[i] - 0.5) / 0.29, self.targets[i]


def test_an_unshuffled_val_loader_in_random_order_is_judged_whole_for_drift():
    train = DataLoader(Stored(20, 100), batch_size=32, shuffle=True)
    val = DataLoader(Stored(20, 100, seed=1, shift=0.8), batch_size=32)  # shuffle=False, as val loaders are
    r = check({"train": train, "val": val})
    assert "drift" in kinds(r)  # was: "drift against train not judged (beyond each class's own)"
    # a val folder stored class by class is still judged within each class: no drift, a note
    sorted_val = DataLoader(Stored(300, 5, order="sorted"), batch_size=32)
    r = check({"train": DataLoader(Stored(300, 5), batch_size=32, shuffle=True), "val": sorted_val})
    assert "drift" not in kinds(r)
    assert any("drawn as the first batches of a DataLoader in index order" in n for n in r["notes"])


class OneVsRest(Stored):
    """CIFAR-like, 20 classes in random order, with ``target_transform``: class 3 against the rest."""

    def __getitem__(self, i):
        image, label = super().__getitem__(i)
        return image, int(label == 3)


def test_targets_that_are_not_the_labels_drawn_do_not_set_the_random_order():
    r = check(DataLoader(OneVsRest(300, 20), batch_size=4))
    assert KIND not in kinds(r)  # was: "14 of 20 ... change class 12 times where a random order would ... 75"
    # the targets still count when they are the labels drawn: every batch of class 0, 3 classes stored
    r = check(DataLoader(Stored(1000, 3, order="sorted"), batch_size=32))
    assert kinds(r) == [KIND] and "the dataset's labels have 3 classes" in r["findings"][0]["message"]


def test_the_val_loaders_line_is_not_the_training_loaders(tmp_path):
    file = tmp_path / "data.py"
    file.write_text(
        textwrap.dedent(
            """\
            from torch.utils.data import DataLoader

            train_loader = None


            def torchdoctor_data():
                val_loader = DataLoader(val_ds, batch_size=32, shuffle=False)
                return {"train": train_loader, "val": val_loader}


            def other():
                val_loader = DataLoader(val_ds, batch_size=32)
                train_loader = DataLoader(train_ds, batch_size=32)
                return {"training": train_loader, "valid": val_loader}
            """
        )
    )
    # the training loader is made at module level: the only call in the function is the val loader's
    assert loader_source.loader_line({"file": str(file), "line": 6}, "train") is None  # was: line 7
    # a "training" split's loader in a variable named train_loader
    assert loader_source.loader_line({"file": str(file), "line": 11}, "training") == {"file": str(file), "line": 13}
    origin = {"file": str(file), "line": 6}
    r = engine.run({"train": DataLoader(Stored(1000, 3, order="sorted"), batch_size=32)}, origin=origin)
    assert r["findings"][0]["source"] == origin


class Codes(Dataset):
    """A categorical code per column, each below its cardinality but column 2's every tenth row."""

    def __init__(self, n=1000):
        g = torch.Generator().manual_seed(2)
        self.codes = torch.stack([torch.randint(0, k, (n,), generator=g) for k in (3, 7, 12, 5)], 1)
        self.codes[::10, 2] = 12  # one past its Embedding(12)
        self.y = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.codes[i], self.y[i]


class PerColumn(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(k, 4) for k in (3, 7, 12, 5)])
        self.fc = nn.Linear(16, 2)


def test_a_code_past_its_own_columns_embedding_is_said_per_column():
    r = check(Codes(), PerColumn())
    assert kinds(r) == ["token-ids-out-of-range"]
    f = r["findings"][0]
    # was: "950 train sequences hold token ids outside [0, 3) of PerColumn.embs.0 (ids 0..12)"
    assert f["message"].startswith("100 train rows of categorical codes")
    assert "column 2 holds codes 0..12 for an Embedding of 12" in f["message"]
    assert f["details"]["columns"] == [2] and f["indices"][:3] == [0, 10, 20]
    # the first Embedding the biggest: column 1's code 7 for its Embedding(7) (was silent: every id fit the first)
    codes = Codes()
    codes.codes = torch.stack([codes.codes[:, 0] * 10, codes.codes[:, 1], codes.codes[:, 3]], 1)
    codes.codes[::10, 1] = 7
    model = PerColumn()
    model.embs = nn.ModuleList([nn.Embedding(k, 4) for k in (50, 7, 5)])
    r = check(codes, model)
    assert kinds(r) == ["token-ids-out-of-range"]
    assert "column 1 holds codes 0..7 for an Embedding of 7" in r["findings"][0]["message"]
    # token ids of 3-id sequences for a model of 3 Embeddings (token, position, segment): still token ids
    tokens = Codes()
    tokens.codes = torch.randint(0, 1000, (1000, 3), generator=torch.Generator().manual_seed(0))
    model.embs = nn.ModuleList([nn.Embedding(k, 4) for k in (1000, 3, 2)])
    assert check(tokens, model)["findings"] == []


class Ignored(Stored):
    """Every third sample's label ignored (-100), the first one's among them."""

    def __getitem__(self, i):
        image, label = super().__getitem__(i)
        return image, -100 if i % 3 == 0 else label


def test_all_batches_of_one_class_name_that_class_not_an_ignored_label():
    r = engine.run({"train": DataLoader(Ignored(1000, 3, order="sorted"), batch_size=32)}, loss=nn.CrossEntropyLoss())
    f = next(f for f in r["findings"] if f["kind"] == KIND)
    assert f["message"].startswith("all 20 drawn train batches (batch size 32) hold class `0` only")  # was `-100`


class Pairs(Stored):
    """An ImageFolder-like dataset with ``samples`` (path, class) pairs and no ``targets``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.samples = [(f"{i}.png", t) for i, t in enumerate(self.targets)]
        del self.targets
        self.labels_drawn = [t for _, t in self.samples]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return (self.images[i] - 0.5) / 0.29, self.labels_drawn[i]


class Binary(Dataset):
    """Float 0/1 targets for BCEWithLogitsLoss, the negatives stored first."""

    def __init__(self, negatives=600, positives=1400):
        self.x = torch.randn(negatives + positives, 10, generator=torch.Generator().manual_seed(0))
        self.y = torch.cat([torch.zeros(negatives), torch.ones(positives)])

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i : i + 1]


def test_the_unshuffled_loaders_the_check_missed_are_caught():
    # DistributedSampler(shuffle=False): each rank's share in index order (was silent)
    ds = Stored(300, 5, order="sorted")
    sampler = torch.utils.data.DistributedSampler(ds, num_replicas=2, rank=0, shuffle=False)
    r = check(DataLoader(ds, batch_size=32, sampler=sampler))
    assert kinds(r) == [KIND] and "a DistributedSampler with shuffle=False" in r["findings"][0]["message"]
    # every drawn batch of class 0 and the classes in ImageFolder's ``samples`` pairs (was silent)
    r = check(DataLoader(Pairs(1000, 3, order="sorted"), batch_size=32))
    assert kinds(r) == [KIND] and "the dataset's labels have 3 classes" in r["findings"][0]["message"]
    # float 0/1 targets of a binary classifier (was silent)
    r = engine.run({"train": DataLoader(Binary(), batch_size=64)}, loss=nn.BCEWithLogitsLoss())
    assert kinds(r) == [KIND]
    # ... and the same in random order stays silent
    order = torch.randperm(2000, generator=torch.Generator().manual_seed(1))
    shuffled = Binary()
    shuffled.y = shuffled.y[order]
    assert engine.run({"train": DataLoader(shuffled, batch_size=64)}, loss=nn.BCEWithLogitsLoss())["findings"] == []


class OneIdLists(Dataset):
    """Labels as ``tensor([class])`` (read from a CSV as lists), classes 1..10, two rows with no label."""

    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(600, 12, generator=g)
        self.y = [torch.tensor([int(v)]) for v in torch.randint(1, 11, (600,), generator=g)]
        self.y[5] = self.y[77] = torch.tensor([], dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def test_a_few_empty_labels_among_one_id_lists_leave_them_classes():
    head = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 10))
    r = engine.run({"train": OneIdLists()}, head, {}, loss=nn.CrossEntropyLoss())
    assert kinds(r) == ["labels-out-of-range"]  # was silent: read as tag lists, not classes
