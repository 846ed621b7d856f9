"""Detection-shaped data (DETR's): images of several sizes, dict targets with ``boxes`` and
``labels``, a collate that pads each batch to its largest image and keeps the targets as a tuple.
Every sample drawn is counted; the statistics say which samples they cover; the per-box labels are
counted in the histogram and the one-label-per-sample checks are not run on them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

from support.data_checks import check
from torchdoctor.data_checks.arrays import box_labels
from torchdoctor.data_checks.reduce import Reducer
from torchdoctor.data_checks.sampling import Draws


class Boxes(Dataset):
    """Normalised images of 3 heights (by blocks of 4 indices) x 2 widths, 1-3 boxes each over 5 classes."""

    def __init__(self, n=40, classes=5):
        self.n, self.classes = n, classes

    def __len__(self):
        return self.n

    def size(self, i):
        return 64 + 8 * ((i // 4) % 3), 80 + 8 * (i % 2)

    def boxes(self, i):
        return 1 + i % 3

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        h, w = self.size(i)
        image = (torch.rand(3, h, w, generator=g) - 0.5) / 0.29
        k = self.boxes(i)
        target = {
            "boxes": torch.rand(k, 4, generator=g),
            "labels": torch.randint(0, self.classes, (k,), generator=g),
            "image_id": torch.tensor(i),
        }
        return image, target


def pad_collate(batch):
    images, targets = zip(*batch)
    h = max(x.shape[1] for x in images)
    w = max(x.shape[2] for x in images)
    out = torch.zeros(len(images), 3, h, w)
    for k, x in enumerate(images):
        out[k, :, : x.shape[1], : x.shape[2]] = x
    return out, targets


def loader(ds, sampler=None, workers=0):
    sampler = sampler if sampler is not None else RandomSampler(ds)
    batches = BatchSampler(sampler, 4, drop_last=True)
    return DataLoader(ds, batch_sampler=batches, collate_fn=pad_collate, num_workers=workers)


def padded_shapes(dl):
    """How many samples each padded batch shape holds, by iterating the loader here."""
    return Counter(tuple(x.shape[1:]) for x, _ in dl for _ in range(len(x)))


def all_box_labels(ds):
    return Counter(str(int(v)) for i in range(len(ds)) for v in ds[i][1]["labels"])


def test_a_healthy_detection_loader_counts_every_sample_and_finds_nothing():
    ds = Boxes()
    r = check(loader(ds))
    assert r["findings"] == [], r["findings"]
    s = r["splits"][0]
    assert s["sampled"] == len(ds)  # drop_last with 40 = 10 batches of 4: every sample drawn
    assert s["statsSampled"] + s["otherShapes"] == s["sampled"]
    assert f"({len(ds)} samples" in r["headline"]
    assert s["labelKind"] == "boxes" and s["boxImages"] == len(ds)
    assert s["labels"] == dict(all_box_labels(ds))  # every box's class id, once
    assert any("detection targets" in n and "not run" in n for n in r["notes"])


def test_the_statistics_cover_the_most_common_padded_shape_and_say_so():
    ds = Boxes()
    dl = loader(ds, SequentialSampler(ds))  # batches known here: the same order twice
    shapes = padded_shapes(dl)
    assert len(shapes) > 1  # the dataset is built so that the padded batches differ
    r = check(dl)
    s = r["splits"][0]
    main_shape, most = shapes.most_common(1)[0]
    assert s["sampled"] == len(ds) and s["statsSampled"] == most and s["otherShapes"] == len(ds) - most
    assert s["shape"] == list(main_shape)
    assert f"statistics over {most}" in r["headline"]
    note = next(n for n in r["notes"] if n.startswith("train: statistics"))
    assert f"over {most} of {len(ds)} samples drawn" in note and "pads each batch" in note
    assert s["gallery"] is None or s["gallery"]["drawn"] == len(ds)


def test_a_map_style_detection_dataset_counts_every_sample():
    ds = Boxes(n=30)
    r = check(ds)
    assert r["findings"] == [], r["findings"]
    s = r["splits"][0]
    shapes = Counter(tuple(ds[i][0].shape) for i in range(len(ds)))
    assert s["sampled"] == len(ds) and s["statsSampled"] == shapes.most_common(1)[0][1]
    assert s["labels"] == dict(all_box_labels(ds)) and s["boxImages"] == len(ds)


def test_box_labels_are_not_judged_as_one_label_per_sample():
    """Almost every box of class 0: as per-sample labels that would be an imbalance; per box it is
    the data, and the imbalance check (accuracy of the majority class) does not apply."""

    class MostlyZero(Boxes):
        def __getitem__(self, i):
            image, target = super().__getitem__(i)
            target["labels"] = torch.zeros_like(target["labels"]) + (1 if i == 0 else 0)
            return image, target

    ds = MostlyZero()
    r = check(loader(ds))
    assert r["findings"] == []
    assert r["splits"][0]["labels"]["0"] > r["splits"][0]["labels"]["1"]


def test_box_labels_are_read_from_detection_targets_only():
    assert list(box_labels({"boxes": torch.zeros(2, 4), "labels": torch.tensor([3, 1])}).ids) == [3, 1]
    assert box_labels({"boxes": torch.zeros(0, 4), "labels": torch.zeros(0, dtype=torch.int64)}).ids.size == 0
    coco = [{"bbox": [0, 0, 5, 5], "category_id": 18}, {"bbox": [1, 1, 2, 2], "category_id": 1}]
    assert list(box_labels(coco).ids) == [18, 1]
    assert box_labels({"label": torch.tensor(2)}) is None  # no boxes: one label per sample, as before
    assert box_labels({"boxes": torch.zeros(1, 4), "labels": torch.tensor([0.5])}) is None  # not class ids
    assert box_labels([1, 0, 1]) is None


def test_the_reducer_keeps_the_shape_with_most_samples():
    r = Reducer("train")
    rng = np.random.default_rng(0)
    r.add_batch([0, 1], rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    r.add_batch(list(range(2, 8)), rng.standard_normal((6, 3, 8, 12)).astype(np.float32))
    s = r.finish(Draws("train", "loader", None, indices=list(range(8)), ys=[None] * 8))
    assert s.shape == (3, 8, 12) and s.sampled == 6 and s.other_shapes == 2 and s.indices == list(range(2, 8))
    assert s.sample_means is not None and len(s.sample_means) == s.sampled and len(s.digests) == s.sampled


def test_a_broken_image_of_the_main_shape_is_still_found_and_the_count_says_what_was_checked():
    class OneNaN(Boxes):
        def __getitem__(self, i):
            image, target = super().__getitem__(i)
            return (image * float("nan") if i == 0 else image), target

    ds = OneNaN()
    dl = loader(ds, SequentialSampler(ds))
    main_shape = padded_shapes(dl).most_common(1)[0][0]
    assert tuple(pad_collate([ds[i] for i in range(4)])[0].shape[1:]) == main_shape  # sample 0's batch
    r = check(dl)
    found = [f for f in r["findings"] if f["kind"] == "nonfinite"]
    assert len(found) == 1 and found[0]["indices"] == [0]
    assert "of other shapes were not checked" in found[0]["message"]
