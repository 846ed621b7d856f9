"""A model config is the plugin's to show (its line names its sizes), whether or not it is a
dataclass: transformers 5's configs are, 4.x's are not (they showed their JSON repr)."""

from __future__ import annotations

import pytest

from support.plugin import load_plugin


@pytest.fixture
def plugin(monkeypatch):
    module = load_plugin(monkeypatch, "td_plugin_configs_under_test")
    return module


class PretrainedConfig:  # transformers 4.x's base, by name: a plain class, no dataclass
    pass


class SmallConfig(PretrainedConfig):
    def __init__(self):
        self.hidden_size, self.vocab_size = 32, 99


def test_a_plain_class_config_gets_the_line_and_keeps_the_debuggers_children(plugin):
    assert plugin._is_ours(SmallConfig)
    assert plugin.TorchDoctorStrProvider().get_str(SmallConfig()) == "SmallConfig hidden_size=32 vocab_size=99"
    resolver = plugin.TorchDoctorTensorResolver()
    assert not resolver.can_provide(SmallConfig, "SmallConfig")  # its fields: listed as pydevd lists them
