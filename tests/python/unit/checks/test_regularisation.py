"""dropout_off: drop rates a layer reads from its config at each forward are zeroed too, and restored."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn

from torchdoctor.checks.regularisation import dropout_off


class LayerDropStack(nn.Module):
    """As Hugging Face's Wav2Vec2 encoder: each layer is skipped when random() < config.layerdrop."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x):
        for layer in self.layers:
            if not (self.training and random.random() < self.config.layerdrop):
                x = layer(x)
        return x


def test_a_config_layerdrop_read_in_forward_is_zeroed_once_and_restored():
    config = SimpleNamespace(layerdrop=0.9, hidden_size=4)
    model = nn.Sequential(LayerDropStack(config), LayerDropStack(config))  # one config, two readers
    off = dropout_off(model)
    assert config.layerdrop == 0.0 and off.attributes == ["0.config.layerdrop"]
    random.seed(0)
    model(torch.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())  # every layer ran
    off.restore()
    assert config.layerdrop == 0.9 and config.hidden_size == 4


def test_hugging_face_wav2vec2_runs_every_layer_with_its_layerdrop_off():
    transformers = pytest.importorskip("transformers")
    config = transformers.Wav2Vec2Config(
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        conv_dim=(8, 8),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=4,
        num_conv_pos_embedding_groups=2,
        layerdrop=0.99,
        mask_time_prob=0.0,
    )
    model = transformers.Wav2Vec2Model(config)
    off = dropout_off(model)
    assert "Wav2Vec2Model.config.layerdrop" in off.attributes  # the root names the config the layers share
    model(torch.randn(2, 400)).last_hidden_state.sum().backward()
    assert all(p.grad is not None for p in model.encoder.layers.parameters())
    off.restore()
    assert model.config.layerdrop == 0.99
