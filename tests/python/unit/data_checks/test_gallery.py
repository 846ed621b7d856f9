"""The images the editor's grid draws: a bounded number per split, at most 64 pixels a side, uint8
for display, the label under each, blank samples marked (and a later blank one kept)."""

from __future__ import annotations

import base64

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import Images, Vectors, check
from torchdoctor.data_checks import thresholds as T
from torchdoctor.data_checks.gallery import base64_rows, downsample


def gallery(result: dict, split: int = 0):
    return result["splits"][split]["gallery"]


def pixels_of(image: dict) -> np.ndarray:
    """An image's uint8 values, H x W x C row-major: sent as one base64 string."""
    assert isinstance(image["pixels"], str)
    return np.frombuffer(base64.b64decode(image["pixels"], validate=True), dtype=np.uint8)


def test_normalised_images_are_stretched_per_channel_with_their_labels():
    ds = Images(n=100, flip=False)
    g = gallery(check(ds))
    assert len(g["images"]) == T.GALLERY_IMAGES and g["drawn"] == 100
    assert (g["width"], g["height"], g["channels"], g["layout"]) == (16, 16, 3, "chw")
    assert g["scale"]["kind"] == "range" and min(g["scale"]["low"]) < 0
    pixels = np.array([pixels_of(im) for im in g["images"]])
    assert pixels.shape == (T.GALLERY_IMAGES, 16 * 16 * 3)
    assert pixels.min() == 0 and pixels.max() == 255  # each channel's range over the kept images
    for im in g["images"]:
        assert im["label"] == str(int(ds.y[im["index"]])) and not im["blank"] and not im["nonfinite"]
    # H x W x C row-major: pixel (0, 0) of image 0, channel 1, is the sample's [1, 0, 0], stretched
    first = g["images"][0]
    x = (ds.x[first["index"]] - 0.5) / 0.29
    lo, hi = g["scale"]["low"][1], g["scale"]["high"][1]
    assert abs(int(pixels_of(first)[1]) - (float(x[1, 0, 0]) - lo) / (hi - lo) * 255) <= 0.51


class LateBlank(Images):
    def __init__(self):
        super().__init__(n=120, flip=False)
        self.x[[3, 90]] = 0.5


def test_blank_samples_are_marked_and_a_later_one_is_kept():
    g = gallery(check(LateBlank()))
    by_index = {im["index"]: im for im in g["images"]}
    assert len(g["images"]) == T.GALLERY_IMAGES
    assert by_index[3]["blank"] and by_index[90]["blank"]  # 90 is past the first 32 draws
    assert sum(im["blank"] for im in g["images"]) == 2
    assert [im["index"] for im in g["images"]] == sorted(by_index)  # in drawing order
    flat = pixels_of(by_index[3]).reshape(-1, 3)  # one value per channel: drawn flat
    assert (flat == flat[0]).all()


class Big(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        x = torch.zeros(1, 200, 100)
        x[0, :, 50] = 1.0  # a one-pixel line: block means keep it visible
        return x, i % 2


def test_big_images_are_reduced_by_block_means_to_at_most_64_a_side():
    g = gallery(check(Big()))
    assert (g["height"], g["width"], g["channels"]) == (50, 25, 1)
    assert g["sourceShape"] == [1, 200, 100] and g["scale"]["kind"] == "unit"
    img = pixels_of(g["images"][0]).reshape(50, 25)
    assert img[:, 12].min() > 0 and img[:, :12].max() == 0
    assert downsample(np.ones((2, 3, 64, 64))).shape == (2, 3, 64, 64)
    assert downsample(np.ones((1, 1, 3, 500))).shape[3] <= 64


class Uint8Hwc(Dataset):
    def __init__(self):
        self.x = np.random.default_rng(0).integers(0, 256, (50, 20, 20, 3), dtype=np.uint8)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], 1


def test_uint8_channels_last_images_keep_their_values():
    ds = Uint8Hwc()
    g = gallery(check(ds))
    assert g["scale"]["kind"] == "uint8" and g["layout"] == "hwc"
    assert pixels_of(g["images"][0]).tolist() == ds.x[g["images"][0]["index"]].ravel().tolist()


def test_a_dataloader_gives_its_batch_and_non_images_give_none():
    loader = DataLoader(Images(n=64, flip=False), batch_size=16)
    g = gallery(check(loader))
    assert len(g["images"]) == T.GALLERY_IMAGES and [im["index"] for im in g["images"]] == list(range(32))
    assert all(im["label"] is not None for im in g["images"])
    assert gallery(check(Vectors())) is None
    assert gallery(check(Images(n=50), galleryImages=0)) is None


class WithNaN(Images):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        if i == 2:
            x = x.clone()
            x[0, :4, :4] = float("nan")
        return x, y


def test_nonfinite_pixels_are_marked_and_do_not_break_the_scale():
    g = gallery(check(WithNaN(n=40, flip=False)))
    assert [im["index"] for im in g["images"] if im["nonfinite"]] == [2]
    assert all(np.isfinite(g["scale"]["low"])) and all(np.isfinite(g["scale"]["high"]))


def test_a_huge_gallery_option_holds_only_what_was_offered():
    """``galleryImages`` is an option: the planes grow with the images kept, never to the limit."""
    from torchdoctor.data_checks.gallery import Gallery

    g = Gallery("chw", np.dtype(np.float32), limit=10**9)
    x = np.random.default_rng(0).random((70, 3, 32, 32), dtype=np.float32)
    for start in range(0, 280, 70):
        g.offer(list(range(start, start + 70)), x, [])
    assert g.planes is not None and g.planes.shape[1] <= 2 * 280
    out = g.to_json(str, (3, 32, 32))
    assert out is not None and [im["index"] for im in out["images"]] == list(range(280))
    assert np.array_equal(pixels_of(out["images"][75]), pixels_of(out["images"][5]))  # the same sample x[5]


def test_base64_rows_match_each_rows_own_encoding_whatever_the_row_length():
    # one encoding sliced when a row is whole 3-byte groups, else one per row: the texts are the same
    g = np.random.default_rng(0)
    for per in (3072, 12, 3, 1, 2, 4, 3073, 0):
        rows = g.integers(0, 256, (5, per), dtype=np.uint8)
        assert base64_rows(rows) == [base64.b64encode(r.tobytes()).decode("ascii") for r in rows], per
    assert base64_rows(np.zeros((0, 12), np.uint8)) == []
