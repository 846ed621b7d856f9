"""Channels last against the model's first conv, float64 inputs, class ids stored as floats."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, TensorDataset

from support.data_checks import Images, check, cnn, kinds


def nhwc(n=100):
    return TensorDataset(torch.rand(n, 32, 32, 3), torch.arange(n) % 4)


def test_channels_last_against_a_conv_is_an_error():
    r = check(nhwc(), cnn(3))
    assert kinds(r) == ["channels-last"]
    f = r["findings"][0]
    assert f["severity"] == "error" and "permute(2, 0, 1)" in f["message"] and f["details"]["inChannels"] == 3


def test_channels_last_in_a_loader_names_the_batch_shape():
    r = check(DataLoader(nhwc(), batch_size=16), cnn(3))
    assert kinds(r) == ["channels-last"]
    assert "[16, 32, 32, 3]" in r["findings"][0]["message"]


def test_channels_last_without_a_model_is_a_warning():
    r = check(nhwc())
    assert [(f["kind"], f["severity"]) for f in r["findings"]] == [("channels-last", "warning")]


def test_channels_first_and_a_model_without_conv_are_silent():
    assert check(Images(), cnn(3))["findings"] == []
    mlp = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(32 * 32 * 3, 4))
    assert check(nhwc(), mlp)["findings"] == []  # an MLP may well take (H, W, C)


def test_float64_inputs():
    r = check(TensorDataset(torch.randn(100, 8, dtype=torch.float64), torch.arange(100) % 3))
    assert kinds(r) == ["float64-inputs"]
    assert "torch.float64" in r["findings"][0]["message"]


def test_float_class_ids_with_a_classifier():
    ds = TensorDataset(torch.randn(100, 8), (torch.arange(100) % 4).float())
    model = torch.nn.Linear(8, 4)
    assert kinds(check(ds, model)) == ["float-class-labels"]
    assert check(ds)["findings"] == []  # without a model, float labels may be a regression target
    regression = TensorDataset(torch.randn(100, 8), torch.randn(100))
    assert check(regression, torch.nn.Linear(8, 4))["findings"] == []


def test_pose_sequences_are_not_images_without_a_model():
    poses = TensorDataset(torch.randn(100, 64, 33, 3), torch.arange(100) % 4)  # (frames, joints, xyz)
    assert check(poses)["findings"] == []


def test_a_placeholder_label_is_no_float_class_id():
    """An autoencoder's dataset returns ``image, 0.0`` to fit a (input, label) loop: one value, no classes."""
    model = torch.nn.Linear(8, 4)
    dummy = TensorDataset(torch.randn(100, 8), torch.zeros(100))
    assert check(dummy, model)["findings"] == []
    two = TensorDataset(torch.randn(100, 8), (torch.arange(100) % 2).float())
    assert kinds(check(two, model)) == ["float-class-labels"]
