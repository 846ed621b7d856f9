"""Segmentation masks against the output channels of the model's conv head (masks.py)."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from support.data_checks import check, kinds
from torchdoctor.data_checks import engine


class Scenes(Dataset):
    """Normalised 3 x 24 x 24 street scenes with an int64 class map per pixel, drawn from ``values``
    in blocks (objects, not noise), as a VOC- or Cityscapes-style dataset returns them."""

    def __init__(self, values=(0, 1, 2), n=40, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 3, 24, 24, generator=g)
        pick = torch.randint(0, len(values), (n, 6, 6), generator=g)
        self.masks = torch.tensor(values)[pick].repeat_interleave(4, 1).repeat_interleave(4, 2)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.masks[i]


class TinySegmenter(nn.Module):
    """An encoder, a decoder and a 1 x 1 conv giving one channel per class."""

    def __init__(self, classes=3):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.decode = nn.ConvTranspose2d(8, 8, 2, stride=2)
        self.classify = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        return self.classify(self.decode(self.encode(x)))


def with_loss(splits, model, loss):
    return engine.run(splits, model, {}, loss=loss)


def test_masks_within_the_heads_classes_are_quiet_and_one_past_them_is_named():
    assert check(Scenes((0, 1, 2)), TinySegmenter(3))["findings"] == []
    ds = Scenes((0, 1, 2))
    ds.masks[[3, 7]] = 3  # two masks hold a fourth class
    r = check(ds, TinySegmenter(3))
    assert kinds(r) == ["labels-out-of-range"]
    f = r["findings"][0]
    assert f["indices"] == [3, 7] and f["details"]["classes"] == 3 and f["details"]["values"] == [3]
    assert "TinySegmenter.classify" in f["message"]


def test_void_255_is_quiet_beside_the_classes_but_a_0_255_binary_mask_is_not():
    r = check(Scenes((0, 1, 2, 255)), TinySegmenter(3))
    assert r["findings"] == [] and any("255 read as ignored pixels" in n for n in r["notes"])
    r = check(Scenes((0, 255)), TinySegmenter(2))  # the foreground saved as 255
    assert kinds(r) == ["labels-out-of-range"] and "0/255" in r["findings"][0]["message"]


def test_the_losss_ignore_index_decides_what_255_is():
    ds = {"train": Scenes((0, 1, 2, 255))}
    assert with_loss(ds, TinySegmenter(3), nn.CrossEntropyLoss(ignore_index=255))["findings"] == []
    r = with_loss(ds, TinySegmenter(3), nn.CrossEntropyLoss())  # ignores -100, not 255
    assert kinds(r) == ["labels-out-of-range"] and "ignore_index=255" in r["findings"][0]["message"]


def test_a_one_channel_head_takes_0_1_masks_not_0_255():
    assert check(Scenes((0, 1)), TinySegmenter(1))["findings"] == []
    bce = with_loss({"train": Scenes((0, 255))}, TinySegmenter(1), nn.BCEWithLogitsLoss())
    assert kinds(bce) == ["labels-out-of-range"] and "0/255" in bce["findings"][0]["message"]
    r = check(Scenes((0, 255)), TinySegmenter(1))  # no loss: one channel may predict an intensity map
    assert r["findings"] == [] and any("not reported" in n for n in r["notes"])


def test_masks_from_a_loader_and_classes_numbered_from_1():
    r = check(DataLoader(Scenes((1, 2, 3)), batch_size=8), TinySegmenter(3))
    assert kinds(r) == ["labels-out-of-range"] and "numbered 1..3" in r["findings"][0]["message"]


def test_without_a_conv_head_the_values_are_only_noted():
    """A classifier (its last layer a Linear) says nothing of a mask's classes: a note, no finding."""
    classifier = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 22 * 22, 2))
    r = check(Scenes((0, 7, 255)), classifier)
    assert r["findings"] == []
    assert any(n.startswith("train: labels are H x W masks (values 0, 7, 255)") for n in r["notes"])


class ResizedScenes(Dataset):
    """An evaluation split resized, not cropped: every scene keeps its own aspect ratio, so the masks
    come in several sizes (and the images with them)."""

    def __init__(self, n=30):
        g = torch.Generator().manual_seed(3)
        widths = [24 + 8 * (i % 5) for i in range(n)]
        self.items = [(torch.randn(3, 24, w, generator=g), torch.randint(0, 3, (24, w), generator=g)) for w in widths]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def test_masks_of_every_size_are_read():
    ds = ResizedScenes()
    assert check(ds, TinySegmenter(3))["findings"] == []
    ds.items[1][1][0, 0] = 7  # a mask of a size other than the most common one
    ds.items[2][1][5, 5] = 7
    r = check(ds, TinySegmenter(3))
    assert kinds(r) == ["labels-out-of-range"] and r["findings"][0]["indices"] == [1, 2]


class Maps(Dataset):
    """Images with an integer H x W map per image that is no class map: ``kind`` "depth" (millimetres,
    500 to 9000) or "instances" (object ids 0..max_id, a discriminative-loss embedding's target)."""

    def __init__(self, kind, n=40, max_id=14):
        g = torch.Generator().manual_seed(4)
        self.x = torch.rand(n, 3, 24, 24, generator=g)
        if kind == "depth":
            self.maps = torch.randint(500, 9000, (n, 24, 24), generator=g)
        else:
            self.maps = torch.zeros(n, 24, 24, dtype=torch.int64)
            for i in range(n):
                for obj in range(1, int(torch.randint(3, max_id + 1, (), generator=g)) + 1):
                    r, c = torch.randint(0, 20, (2,), generator=g).tolist()
                    self.maps[i, r : r + 4, c : c + 4] = obj

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.maps[i]


class ConvOut(nn.Module):
    """A body and a 1 x 1 conv of ``channels`` outputs; ``head_first`` registers the head before the body."""

    def __init__(self, channels, head_first=False):
        super().__init__()
        if head_first:
            self.head = nn.Conv2d(8, channels, 1)
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        if not head_first:
            self.head = nn.Conv2d(8, channels, 1)

    def forward(self, x):
        return self.head(self.body(x))


def test_a_depth_map_or_instance_ids_are_no_class_ids():
    assert check(Maps("depth"), ConvOut(1))["findings"] == []
    r = check(Maps("instances"), ConvOut(8))
    assert r["findings"] == [] and any("not reported" in n for n in r["notes"])


def test_the_head_is_the_conv_that_runs_last():
    assert (
        with_loss({"train": Scenes(tuple(range(12)))}, ConvOut(12, head_first=True), nn.CrossEntropyLoss())["findings"]
        == []
    )
    r = with_loss({"train": Scenes(tuple(range(13)))}, ConvOut(12, head_first=True), nn.CrossEntropyLoss())
    assert kinds(r) == ["labels-out-of-range"] and "ConvOut.head" in r["findings"][0]["message"]


class TwoInputs(ConvOut):
    """The same net, whose forward takes a second input: it cannot be run on one sample."""

    def forward(self, x, scale):
        return self.head(self.body(x)) * scale


def test_a_head_found_without_running_the_model_is_only_a_note():
    r = with_loss({"train": Scenes(tuple(range(13)))}, TwoInputs(12), nn.CrossEntropyLoss())
    assert r["findings"] == [] and any("could not run" in n for n in r["notes"])


def test_running_the_model_leaves_it_as_it_was():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Conv2d(4, 3, 1))
    model.train()
    before = torch.get_rng_state()
    assert check(Scenes((0, 1, 2)), model)["findings"] == []
    assert model.training and model[1].training and int(model[1].num_batches_tracked) == 0
    assert torch.equal(torch.get_rng_state(), before)
    assert all(not m._forward_hooks for m in model.modules())
