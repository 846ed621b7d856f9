"""Input sizes that are not square (issue 14): a 64x128 image model and a 40x101 spectrogram model
(speech-commands shape) have a first Linear that no square input fits; height and width are solved
one at a time, never assumed square, and the option spatialSize takes one size per axis."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from support.checks import example, new_result, quiet, write
from torchdoctor.checks import example as E
from torchdoctor.checks import overfit, shape_trace

MODELS = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class WideCNN(nn.Module):
    \"\"\"64x128 road images: two stride-2 convolutions, 32 channels of 16x32, flattened.\"\"\"

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32 * 16 * 32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.conv2(F.relu(self.conv1(x)))), 1))


class KeywordSpotter(nn.Module):
    \"\"\"40 MFCCs x 101 frames: conv 3x3 + pool 2, twice, gives 64 x 8 x 23.\"\"\"

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3)
        self.conv2 = nn.Conv2d(16, 32, 3)
        self.fc1 = nn.Linear(32 * 8 * 23, 12)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc1(x.flatten(1))


class Mismatched(nn.Module):
    \"\"\"A Linear no input size can feed (1000 is not a multiple of the 32 channels).\"\"\"

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3, padding=1)
        self.fc = nn.Linear(1000, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.conv(x), 1))
"""


@pytest.fixture
def models(tmp_path: Path) -> Path:
    return write(tmp_path, "rect_models.py", MODELS)


def _inputs(path: Path, name: str, options: dict | None = None):
    torch.manual_seed(0)
    return example(path, name, options, targets=False)


@pytest.mark.parametrize(
    "name, shape, other",
    [("WideCNN", (8, 3, 64, 128), "128x64"), ("KeywordSpotter", (8, 1, 40, 100), "100x40")],
)
def test_height_and_width_are_solved_apart_from_the_first_linear(models: Path, name, shape, other):
    ex = _inputs(models, name)
    assert tuple(ex.inputs[0].shape) == shape  # was an ERROR: "no square input size up to 512"
    said = ex.inferred[-1]
    assert f"spatial size {shape[2]}x{shape[3]} (H x W) solved from" in said and "no square input gives" in said
    assert f"{other} fits as well: the features cannot tell height from width" in said
    r = shape_trace.run(ex, {}, quiet, new_result("shapes", name))
    assert r["verdict"] == "PASS", r["headline"]


def test_a_non_square_model_alone_passes_the_overfit_test(models: Path):
    torch.manual_seed(0)
    ex = example(models, "KeywordSpotter")
    r = overfit.run(ex, {"timeBudgetSeconds": 900}, quiet, new_result("overfit", "KeywordSpotter"))
    assert r["verdict"] == "PASS", r["headline"]


def test_a_linear_no_size_can_feed_stays_our_assumption_not_a_bug(models: Path):
    ex = _inputs(models, "Mismatched")
    assert "spatial size 32 is Torch Doctor's default, an assumption" in ex.inferred[-1]
    r = shape_trace.run(ex, {}, quiet, new_result("shapes", "Mismatched"))
    assert r["verdict"] != "FAIL", r["headline"]
    text = " ".join([r["headline"], *r["sentences"]])
    assert "square or height and width apart" in text and "may be our assumption" in text


def test_spatial_size_option_takes_one_size_per_axis(models: Path):
    ex = _inputs(models, "WideCNN", {"spatialSize": [64, 128]})
    assert tuple(ex.inputs[0].shape) == (8, 3, 64, 128)
    assert "spatial size 64x128 from the option spatialSize" in ex.inferred[-1]
    assert tuple(_inputs(models, "WideCNN", {"spatialSize": 32}).inputs[0].shape) == (8, 3, 32, 32)
    with pytest.raises(E.ExampleError) as info:
        _inputs(models, "WideCNN", {"spatialSize": [64, 128, 3]})
    assert info.value.kind == "usage" and "give 2 sizes, or one number for all of them" in info.value.message
