"""The label under each image for detection targets (dict targets with ``boxes`` and ``labels``,
one per image or a tuple of them per batch): the box count and the class ids, as the label
histogram counts them; before, such images had nothing under them."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import check
from torchdoctor.data_checks.gallery import box_caption


class Detection(Dataset):
    """16 x 16 images with i % 3 boxes (0, 1 or 2) of classes (i, i + 7)."""

    def __len__(self):
        return 30

    def ids(self, i):
        return [i, i + 7][: i % 3]

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        k = i % 3
        target = {"boxes": torch.rand(k, 4, generator=g), "labels": torch.tensor(self.ids(i), dtype=torch.int64)}
        return (torch.rand(3, 16, 16, generator=g) - 0.5) / 0.29, target


def collate(batch):
    images, targets = zip(*batch)
    return torch.stack(images), targets  # the targets stay a tuple of dicts (DETR, torchvision)


def _captions(result: dict) -> dict:
    return {im["index"]: im["label"] for im in result["splits"][0]["gallery"]["images"]}


def test_box_caption_says_the_count_and_the_sorted_ids():
    assert box_caption(torch.tensor([7, 1, 7]).numpy()) == "3 boxes: 1, 7, 7"
    assert box_caption([4]) == "1 box: 4"
    assert box_caption([]) == "0 boxes"
    assert box_caption(list(range(9)), shown=3) == "9 boxes: 0, 1, 2, ..."


def test_dict_targets_of_a_dataset_put_the_boxes_under_each_image():
    ds = Detection()
    result = check(ds)
    assert result["splits"][0]["labelKind"] == "boxes"
    captions = _captions(result)
    assert len(captions) == 30
    for i, label in captions.items():
        assert label == box_caption(ds.ids(i)), (i, label)


def test_a_tuple_of_targets_per_batch_puts_the_boxes_under_each_image():
    ds = Detection()
    result = check(DataLoader(ds, batch_size=5, collate_fn=collate))
    captions = _captions(result)
    assert captions[4] == "1 box: 4" and captions[5] == "2 boxes: 5, 12" and captions[6] == "0 boxes"
