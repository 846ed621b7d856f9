"""The needs-example snippet of a vision class built from a config: its images are drawn with the
config's channels and size, and, executed as written, it builds a model that takes them. Before:
``pixel_values = torch.randn(8, ...)`` and ``config=...``, for the user to fill in."""

from __future__ import annotations

import math

import pytest

from torchdoctor.checks.example.snippet import example_snippet


class PatchConfig:
    """A ViT-like config, written here: channels, image size and the usual widths."""

    def __init__(self, hidden_size=768, num_hidden_layers=12, num_channels=3, image_size=224, num_labels=2):
        self.num_channels, self.image_size, self.num_labels = num_channels, image_size, num_labels


class StageConfig:
    """A ResNet-like config: channels, and widths per stage (lists) that no single size fits."""

    def __init__(self, num_channels=3, hidden_sizes=(256, 512), depths=(3, 4)):
        self.num_channels = num_channels


class PatchNet:
    config_class = PatchConfig

    def forward(self, pixel_values, labels=None):
        pass


PatchNet.__name__ = "PatchNetForImageClassification"


class StageNet:
    config_class = StageConfig

    def forward(self, pixel_values):
        pass


def snippet(cls) -> str:
    return example_snippet(cls.__name__, ["config"], ["pixel_values"], cls=cls)


def test_the_images_take_the_configs_channels_and_size():
    text = snippet(PatchNet)
    assert "torch.randn(8, config.num_channels, config.image_size, config.image_size)" in text
    assert "hidden_size=32" in text and "num_hidden_layers=2" in text  # small, in the config's names
    assert "torch.randint(0, config.num_labels, (8,))" in text and '"targets": labels' in text
    assert "..." not in text


def test_a_config_without_an_image_size_gets_the_default_side_and_its_own_stage_sizes():
    text = snippet(StageNet)
    assert "torch.randn(8, config.num_channels, " in text and "config.image_size" not in text
    assert "config = StageConfig()" in text  # lists of widths per stage are left as they are
    assert '"targets"' not in text  # no labels in its forward: inferred from the output
    compile(text, "snippet.py", "exec")


@pytest.mark.parametrize("class_name", ["ViTForImageClassification", "ResNetForImageClassification"])
def test_a_hugging_face_vision_snippet_runs_as_written(class_name: str):
    transformers = pytest.importorskip("transformers")
    cls = getattr(transformers, class_name)
    scope: dict = {}
    exec(compile(snippet(cls), "snippet.py", "exec"), scope)
    ex = scope["torchdoctor_example"]()
    model = ex["model"].train()
    (pixels,) = ex["inputs"]
    assert pixels.shape[1] == model.config.num_channels
    out = model(pixels, labels=ex["targets"])
    assert out.loss is not None and math.isfinite(out.loss.item())
