"""Duplicates within and across splits: on stored rows behind Subsets, on seeded draws of a random
dataset, and silence for distinct samples and low-cardinality rows."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Subset, TensorDataset, random_split

from support.data_checks import Images, check, kinds
from torchdoctor.data_checks.duplicates import constant_rows


def images(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 12, 12, generator=g), torch.randint(0, 3, (n,), generator=g)


def test_overlapping_subsets_leak_across_splits():
    x, y = images(300)
    full = TensorDataset(x, y)
    r = check({"train": Subset(full, range(0, 200)), "test": Subset(full, range(180, 300))})
    assert kinds(r) == ["duplicates-across-splits"]
    f = r["findings"][0]
    assert f["split"] == "test" and f["count"] == 20 and f["details"]["method"] == "raw"
    assert f["details"]["pairs"][0] == [0, 180]  # test 0 is train 180


def test_copies_made_before_random_split():
    x, y = images(200)
    x, y = torch.cat([x, x[:40]]), torch.cat([y, y[:40]])
    train, test = random_split(TensorDataset(x, y), [180, 60], generator=torch.Generator().manual_seed(0))
    r = check({"train": train, "test": test})
    assert "duplicates-across-splits" in kinds(r)


def test_duplicates_within_one_split():
    x, y = images(200)
    x[50:60] = x[0:10]
    r = check(TensorDataset(x, y))
    assert kinds(r) == ["duplicates-within-split"]
    assert r["findings"][0]["indices"] == list(range(50, 60))


class AugmentedList(Dataset):
    """Stored in a Python list (no array to hash) with a random transform: hashed on seeded draws."""

    def __init__(self, x):
        self.items = list(x)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        img = self.items[i]
        if torch.rand(()) < 0.5:
            img = img.flip(-1)
        return img + 0.01 * torch.randn(img.shape), 0


def test_random_transforms_do_not_hide_copies():
    x, _ = images(150)
    r = check({"train": AugmentedList(x[:100]), "val": AugmentedList(x[90:150])})
    found = [f for f in r["findings"] if f["kind"] == "duplicates-across-splits"]
    assert len(found) == 1 and found[0]["count"] == 10 and found[0]["details"]["method"] == "drawn"


def test_distinct_splits_are_silent():
    assert check({"train": Images(200, seed=0), "val": Images(100, seed=1)})["findings"] == []


def test_low_cardinality_rows_are_not_duplicates():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 2, (300, 4), generator=g).float()  # 16 possible rows
    r = check(
        {"train": TensorDataset(x[:200], torch.arange(200) % 2), "val": TensorDataset(x[200:], torch.arange(100) % 2)}
    )
    assert not [k for k in kinds(r) if k.startswith("duplicates")]


class Listed(Dataset):
    """Fixed samples in a Python list: no stored array, no random transform."""

    def __init__(self, x):
        self.items = list(x)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], 0


def test_a_split_with_stored_rows_next_to_one_without():
    x, y = images(150)
    r = check({"train": TensorDataset(x[:100], y[:100]), "val": Listed(x[95:150])})
    found = [f for f in r["findings"] if f["kind"] == "duplicates-across-splits"]
    assert len(found) == 1 and found[0]["count"] == 5 and found[0]["details"]["method"] == "drawn"
    assert found[0]["details"]["pairs"][0] == [0, 95]


def test_loader_batches_are_not_fingerprinted_when_every_split_keeps_its_rows():
    """The stored rows are hashed for every split, so the batches' digests would never be read (they
    were a fifth of a DataLoader check's time); the leak is still found on the stored rows."""
    from torchdoctor.data_checks.engine import build_context

    x, y = images(300)
    full = TensorDataset(x, y)
    splits = {
        "train": DataLoader(Subset(full, range(0, 200)), 32),
        "test": DataLoader(Subset(full, range(180, 300)), 32),
    }
    ctx = build_context(splits)
    assert [s.stats.digests for s in ctx.splits] == [[], []]
    found = [f for f in check(splits)["findings"] if f["kind"] == "duplicates-across-splits"]
    assert len(found) == 1 and found[0]["count"] == 20 and found[0]["details"]["method"] == "raw"


def test_a_loader_with_stored_rows_next_to_a_split_without_still_compares_its_batches():
    x, y = images(150)
    r = check({"train": DataLoader(TensorDataset(x[:100], y[:100]), 25), "val": Listed(x[95:150])})
    found = [f for f in r["findings"] if f["kind"] == "duplicates-across-splits"]
    assert len(found) == 1 and found[0]["count"] == 5 and found[0]["details"]["method"] == "drawn"


class Noise(Dataset):
    """Synthetic data: every sample is fresh noise from the global generator (no stored rows)."""

    def __init__(self, n=60):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, 8, 8), i % 3


def _ignores_index(r: dict) -> list:
    return [f for f in r["findings"] if f["details"].get("cause") == "features-ignore-index"]


def test_noise_from_the_generator_is_not_taken_for_copies():
    """Seeded alike for the duplicate hash, noise is the same for every index: every sample looked
    like a copy of every other (a warning within, an ERROR leak across splits). It is said as features
    that do not depend on the index (a warning per split), not as byte copies."""
    r = check({"train": Noise(), "val": Noise(40)})
    assert not [f for f in r["findings"] if f["kind"] == "duplicates-across-splits"]
    found = _ignores_index(r)
    assert sorted(f["split"] for f in found) == ["train", "val"]
    assert all(f["severity"] == "warning" and "repeat another sample" not in f["message"] for f in found)


class FirstStored(Dataset):
    """The bug the noise rule must not hide: ``__getitem__`` ignores its index (always image 0),
    under a random flip and brightness."""

    def __init__(self, x, n):
        self.x, self.n = x, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = self.x[0]  # the bug: self.x[i]
        if torch.rand(()) < 0.5:
            img = img.flip(-1)
        return img * (0.8 + 0.4 * torch.rand(())), i % 3


def test_a_getitem_that_ignores_its_index_is_a_warning_naming_both_causes():
    x, _ = images(60)
    r = check({"train": FirstStored(x, 50), "val": FirstStored(x, 30)})
    found = _ignores_index(r)
    assert sorted(f["split"] for f in found) == ["train", "val"]
    assert all(
        "one stored sample for every index" in f["message"] and "random generator" in f["message"] for f in found
    )


def test_copies_under_random_transforms_are_still_found_next_to_noise_rules():
    x, _ = images(150)
    r = check({"train": AugmentedList(x[:100]), "val": AugmentedList(x[90:150])})
    assert [f["count"] for f in r["findings"] if f["kind"] == "duplicates-across-splits"] == [10]


def test_constant_rows_are_those_whose_min_is_their_max_whatever_the_dtype():
    # only rows equal at their first, second and last values are read whole: the answer is min == max's
    g = np.random.default_rng(0)
    for dtype in (np.uint8, np.float32, np.int64):
        flat = g.integers(0, 3, (400, 7)).astype(dtype)
        flat[::9] = 5  # constant rows
        flat[1::9, :] = 2
        flat[1::9, 3] = 1  # equal at both ends, not throughout
        assert (constant_rows(flat) == (flat.min(1) == flat.max(1))).all()
    nan = np.array([[np.nan, np.nan], [0.0, -0.0], [1.0, 2.0]])
    assert constant_rows(nan).tolist() == (nan.min(1) == nan.max(1)).tolist() == [False, True, False]
    assert constant_rows(np.zeros((3, 1))).all() and constant_rows(np.zeros((2, 0))).all()


class Captioned(Dataset):
    """(image, caption ids): each image with ``per`` different captions (COCO, Flickr); ``copies``:
    the first that many samples given again, caption and all."""

    def __init__(self, images, per=5, copies=0, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.images, self.per = images, per
        self.captions = torch.randint(4, 500, (len(images) * per, 12), generator=g)
        self.order = list(range(len(images) * per)) + list(range(copies))

    def __len__(self):
        return len(self.order)

    def __getitem__(self, i):
        k = self.order[i]
        return self.images[k // self.per], self.captions[k]


def test_one_image_with_several_captions_is_not_a_duplicate():
    r = check({"train": Captioned(images(60)[0]), "val": Captioned(images(20, seed=1)[0], seed=1)})
    assert r["findings"] == []
    assert any("train: 60 images appear with several captions" in n for n in r["notes"])


def test_captioned_copies_and_leaks_are_still_found():
    """The same image with the same caption is a copy; the same image in two splits is a leak."""
    r = check(Captioned(images(60)[0], copies=40))
    assert kinds(r) == ["duplicates-within-split"] and r["findings"][0]["count"] == 40
    x = images(60)[0]
    r = check({"train": Captioned(x), "test": Captioned(x[40:], seed=1)})
    assert kinds(r) == ["duplicates-across-splits"]


def test_equal_features_with_different_class_labels_are_still_duplicates():
    """Scalar class labels that differ between copies are conflicting labels, not captions."""
    x, y = images(200)
    x[50:60] = x[0:10]
    y[50:60] = (y[0:10] + 1) % 3
    r = check(TensorDataset(x, y))
    assert kinds(r) == ["duplicates-within-split"] and r["findings"][0]["indices"] == list(range(50, 60))


class UnpairedDomains(Dataset):
    """Two unpaired image sets of different sizes (an image-to-image translation's A and B): as long as
    the bigger one, each index takes A modulo its size and a random B."""

    def __init__(self, n_a=90, n_b=110):
        self.a, _ = images(n_a)
        self.b, _ = images(n_b, seed=1)

    def __len__(self):
        return max(len(self.a), len(self.b))

    def __getitem__(self, i):
        return {"A": self.a[i % len(self.a)], "B": self.b[int(torch.randint(len(self.b), ()))]}


def test_a_smaller_part_wrapped_around_is_a_note_but_data_appended_twice_is_not():
    r = check(UnpairedDomains())
    assert r["findings"] == [] and any("wraps around modulo 90" in n for n in r["notes"])
    x, y = images(100)
    twice = TensorDataset(torch.cat([x, x]), torch.cat([y, y]))  # the same rows appended again
    assert kinds(check(twice)) == ["duplicates-within-split"]


class Sentences(Dataset):
    """Unpadded id sequences of 8 to 30 ids (a text dataset before its collate pads them)."""

    def __init__(self, n=150, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.rows = [torch.randint(4, 1000, (int(k),), generator=g) for k in torch.randint(8, 31, (n,), generator=g)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i], i % 2


def test_sentences_of_every_length_are_compared_across_splits():
    train, val = Sentences(), Sentences(50, seed=1)
    assert check({"train": train, "val": val})["findings"] == []
    val.rows[10:20] = train.rows[30:40]  # ten training sentences in the validation split
    r = check({"train": train, "val": val})
    assert kinds(r) == ["duplicates-across-splits"] and r["findings"][0]["indices"] == list(range(10, 20))


class Shards(Dataset):
    """Unlabelled dict rows where an overlapping shard was appended: the first ``again`` rows twice."""

    def __init__(self, n=400, again=120):
        g = torch.Generator().manual_seed(2)
        base = torch.randint(5, 1000, (n, 24), generator=g)
        self.ids = torch.cat([base, base[:again]])

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i]}


def test_a_shard_appended_again_is_reported_though_it_looks_wrapped():
    r = check(Shards())
    assert kinds(r) == ["duplicates-within-split"] and r["findings"][0]["indices"][:2] == [400, 401]
    assert not any("wraps around" in n for n in r["notes"])
