"""Per-channel value histograms of a split's images (data_checks/histograms.py): counts only, fixed
bins over each channel's observed range, from a bounded part of the samples already drawn."""

from __future__ import annotations

import warnings

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from support.data_checks import Images, check
from torchdoctor.data_checks import histograms as H


def _hist(result: dict, split: int = 0) -> dict:
    return result["splits"][split]["gallery"]["histograms"]


def test_one_channel_counts_sum_to_the_values_and_bins_span_min_to_max():
    values = np.array([0.0, 0.5, 1.0, 2.0, 2.0, 3.0])
    h = H.histogram(values, bins=3)
    assert (h["low"], h["high"]) == (0.0, 3.0)
    assert h["counts"] == [2, 1, 3]  # [0, 1), [1, 2), [2, 3]: the top edge is in the last bin
    assert sum(h["counts"]) == h["values"] == 6 and h["nonfinite"] == 0


def test_nan_and_inf_are_counted_apart_and_a_constant_channel_has_one_full_bin():
    h = H.histogram(np.array([1.0, np.nan, np.inf, 1.0]), bins=4)
    assert h["values"] == 2 and h["nonfinite"] == 2 and h["counts"] == [2, 0, 0, 0]
    assert h["low"] == h["high"] == 1.0
    empty = H.histogram(np.array([np.nan]))
    assert empty["counts"] == [] and empty["values"] == 0 and empty["nonfinite"] == 1


def test_each_channel_of_a_normalised_split_gets_its_own_range():
    ds = Images(n=60, channels=3, size=16, flip=False)
    ds.x[:, 2] *= 0.1  # channel 2 spans a tenth of the others' range
    h = _hist(check(ds))
    assert h["bins"] == H.BINS and h["samples"] == 60 and len(h["channels"]) == 3
    x = ((ds.x - 0.5) / 0.29).numpy()
    for ch, c in enumerate(h["channels"]):
        assert len(c["counts"]) == H.BINS
        assert sum(c["counts"]) == c["values"] == 60 * 16 * 16  # 256 pixels a channel: every one read
        assert np.isclose(c["low"], x[:, ch].min(), atol=1e-5) and np.isclose(c["high"], x[:, ch].max(), atol=1e-5)
    assert h["channels"][2]["high"] - h["channels"][2]["low"] < 0.2 * (
        h["channels"][0]["high"] - h["channels"][0]["low"]
    )


class Uint8Hwc(Dataset):
    """Channels-last uint8 images: channel 0 all 255 (saturated), channel 1 0..99, channel 2 zero."""

    def __len__(self):
        return 40

    def __getitem__(self, i):
        x = np.zeros((20, 24, 3), np.uint8)
        x[..., 0] = 255
        x[..., 1] = (np.arange(20 * 24).reshape(20, 24) + i) % 100
        return torch.from_numpy(x), i % 2


def test_channels_last_uint8_through_a_loader_keeps_each_channel_apart():
    h = _hist(check(DataLoader(Uint8Hwc(), batch_size=8)))
    assert len(h["channels"]) == 3 and h["samples"] == 40
    red, green, blue = h["channels"]
    assert (red["low"], red["high"]) == (255.0, 255.0) and red["counts"][0] == red["values"]
    assert (green["low"], green["high"]) == (0.0, 99.0) and sum(green["counts"]) == green["values"]
    assert (blue["low"], blue["high"]) == (0.0, 0.0)
    # 20 x 24 pixels a channel, read at an even stride to at most PER_SAMPLE of them
    per = len(range(0, 20 * 24, -(-(20 * 24) // H.PER_SAMPLE)))
    assert per <= H.PER_SAMPLE and red["values"] == green["values"] == 40 * per


def test_the_cost_is_bounded_by_samples_and_values_per_sample():
    hist = H.Histograms("chw", samples=10, per_sample=100)
    for _ in range(5):  # 5 chunks of 4 samples: only the first 10 samples are read
        hist.offer(np.random.default_rng(0).random((4, 3, 64, 64), dtype=np.float32))
    out = hist.to_json(bins=8)
    assert out is not None and out["samples"] == 10 and out["bins"] == 8
    for c in out["channels"]:
        # 64 * 64 values a channel, every 41st: 100 values a sample at most
        assert 0 < c["values"] <= 10 * 100 and sum(c["counts"]) == c["values"]
    assert hist.values is not None and hist.values.nbytes <= 10 * 3 * 100 * 4


def test_no_gallery_no_histograms():
    result = check(Images(n=20), galleryImages=0)
    assert result["splits"][0]["gallery"] is None
    assert H.Histograms("hw").to_json() is None


def test_the_bins_agree_with_numpy_histogram_over_the_same_range():
    values = np.random.default_rng(1).normal(size=50_000).astype(np.float32)
    ours = H.histogram(values, bins=32)["counts"]
    theirs = np.histogram(values, bins=32, range=(float(values.min()), float(values.max())))[0]
    # float32 arithmetic may put a value on a bin edge in its neighbour: a handful at most
    assert sum(ours) == values.size and np.abs(np.array(ours) - theirs).sum() <= 4
    ints = H.histogram(np.arange(256, dtype=np.uint8), bins=32)["counts"]
    assert ints == [8] * 32  # 0..255 in 32 bins of 8 values


def test_values_whose_span_overflows_float32_fall_in_the_end_bins_without_a_warning():
    """-3e38 and 3e38 are float32, their difference is not: the offset was taken in float32 (overflow
    to inf, a RuntimeWarning, and the bins of inf cast to an integer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = H.histogram(np.array([-3e38, 0.0, 3e38], np.float32))
        wide = H.histogram(np.array([-1.7e308, 1.7e308], np.float64))
    assert h["counts"][0] == 1 and h["counts"][-1] == 1 and sum(h["counts"]) == 3
    assert h["counts"][len(h["counts"]) // 2] == 1
    assert wide["counts"][0] == 1 and wide["counts"][-1] == 1
