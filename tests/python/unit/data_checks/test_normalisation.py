"""0..255 floats and unstandardised feature vectors are flagged; [0, 1] images and standardised
features are not."""

from __future__ import annotations

import torch
from torch.utils.data import TensorDataset

from support.data_checks import Vectors, check, kinds


def test_uint8_range_floats():
    x = torch.randint(0, 256, (200, 3, 16, 16)).float()
    r = check(TensorDataset(x, torch.arange(200) % 4))
    assert kinds(r) == ["uint8-range-floats"]
    assert "255" in r["findings"][0]["message"]


def test_images_in_unit_range_or_non_integral_large_values_are_silent():
    y = torch.arange(200) % 4
    assert check(TensorDataset(torch.rand(200, 3, 16, 16), y))["findings"] == []
    depth = torch.rand(200, 1, 16, 16) * 80  # a depth map in metres: large, not pixel counts
    assert check(TensorDataset(depth, y))["findings"] == []


def test_unscaled_features_are_listed():
    r = check(Vectors(scale=50.0))
    assert kinds(r) == ["unnormalised"]
    assert len(r["findings"][0]["details"]["features"]) == 8
    r = check(Vectors(offset=1000.0))
    assert kinds(r) == ["unnormalised"]


def test_standardised_features_are_silent():
    assert check(Vectors())["findings"] == []
    assert check(Vectors(scale=3.0))["findings"] == []


def test_imagenet_statistics_on_dark_grayscale_scans():
    g = torch.Generator().manual_seed(0)
    scans = (0.1 + 0.05 * torch.rand(200, 1, 16, 16, generator=g)).repeat(1, 3, 1, 1)  # dark, gray
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    r = check(TensorDataset((scans - mean) / std, torch.arange(200) % 4))
    assert kinds(r) == ["normalisation-mismatch"]
    assert "ImageNet's statistics" in r["findings"][0]["message"]


def test_imagenet_statistics_on_photo_like_data_are_silent():
    g = torch.Generator().manual_seed(0)
    photos = torch.rand(200, 3, 16, 16, generator=g) * 0.8 + 0.1
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    assert check(TensorDataset((photos - mean) / std, torch.arange(200) % 4))["findings"] == []


def _log_mel(n=200):
    """Log-mel spectrograms in dB (about -80..0, mean near -25): an audio pipeline's input, never
    put through Normalize."""
    g = torch.Generator().manual_seed(0)
    return TensorDataset(-25.0 + 6.0 * torch.randn(n, 1, 32, 40, generator=g), torch.arange(n) % 4)


def _audio_cnn(first_norm: bool):
    layers = [torch.nn.BatchNorm2d(1)] if first_norm else []
    layers += [torch.nn.Conv2d(1, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 4)]
    return torch.nn.Sequential(*layers)


def test_a_model_that_standardises_its_own_input_is_not_told_to_normalise():
    # PANNs-style audio CNNs put a BatchNorm2d first, over log-mel dB values
    r = check(_log_mel(), _audio_cnn(first_norm=True))
    assert r["findings"] == []
    assert any("first layer 0 (BatchNorm2d) standardises its input" in n for n in r["notes"])


def test_the_same_data_into_a_conv_first_model_is_reported_without_assuming_a_normalize():
    r = check(_log_mel(), _audio_cnn(first_norm=False))
    assert kinds(r) == ["normalisation-mismatch"]
    message = r["findings"][0]["message"]
    assert "if they went through Normalize" in message and "if not, they are not standardised" in message


def test_rgb_0_255_floats_left_fractional_by_a_resize():
    """Photos converted to 0..255 floats and then resized as floats (bilinear) are no longer whole
    numbers: still pixel values never scaled. A one-channel map of the same range stays quiet above."""
    photos = torch.randint(0, 256, (200, 3, 16, 16)).float()
    resized = torch.nn.functional.interpolate(photos, size=20, mode="bilinear", align_corners=False)
    r = check(TensorDataset(resized, torch.arange(200) % 4))
    assert kinds(r) == ["uint8-range-floats"]
    assert check(TensorDataset(resized / 255, torch.arange(200) % 4))["findings"] == []
    readings = torch.rand(200, 3, 16, 16) * 15  # three channels of small readings, averaging 7.5: not pixels
    assert check(TensorDataset(readings, torch.arange(200) % 4))["findings"] == []
