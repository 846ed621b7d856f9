"""A model config's line: the sizes an engineer checks (width, depth, heads, vocabulary, dtype when
set), not its JSON repr clipped in the middle; read without running the config's own code.

Before: ``summarize(BertConfig(hidden_size=32, ...))`` gave ``BertConfig { "add_cross_attention":
...use_cache": true, "vocab_size": 99 }``: the fields that come first and last alphabetically."""

from __future__ import annotations

import pytest

from torchdoctor.runtime.summary.api import stats, summarize, summarize_if_ours
from torchdoctor.runtime.summary.kinds import classify
from torchdoctor.runtime.summary.render import LINE_LIMIT

pytestmark = pytest.mark.filterwarnings("error")


class PretrainedConfig:
    """Stands in for transformers' base class, known by its name only."""

    model_type = ""
    attribute_map: dict = {}

    def __repr__(self) -> str:
        return type(self).__name__ + " {" + ", ".join(f'"{k}": {v!r}' for k, v in sorted(vars(self).items())) + "}"


class TinyConfig(PretrainedConfig):
    """GPT-2's spelling: the canonical names are aliases of its own."""

    model_type = "tiny"
    attribute_map = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head"}

    def __init__(self, dtype=None):
        self.add_cross_attention = False
        self.n_embd, self.n_layer, self.n_head, self.vocab_size = 32, 2, 4, 99
        self.dtype = dtype
        self.id2label = {0: "LABEL_0", 1: "LABEL_1"}
        self.use_cache = True

    @property
    def torch_dtype(self):  # as transformers 5: reading it warns (an error under this module's filter)
        raise DeprecationWarning("torch_dtype is deprecated")


class PairConfig(PretrainedConfig):
    """A composite config (CLIP's): no sizes of its own, two configs it is made of."""

    model_type = "pair"

    def __init__(self):
        self.text_config, self.vision_config = TinyConfig(), TinyConfig(dtype="bfloat16")
        self.projection_dim = 8


def test_the_line_names_the_type_and_the_sizes_in_the_configs_own_names():
    line = summarize(TinyConfig())
    assert line.startswith("TinyConfig tiny ")
    for field in ("n_embd=32", "n_layer=2", "n_head=4", "vocab_size=99"):
        assert field in line
    assert "add_cross_attention" not in line and "use_cache" not in line and "dtype" not in line  # unset: not shown


def test_a_set_dtype_is_shown_and_the_fields_are_in_stats():
    config = TinyConfig(dtype="bfloat16")
    assert summarize(config).endswith("dtype=bfloat16")
    info = stats(config)
    assert info["kind"] == "config" and info["model_type"] == "tiny"
    assert info["fields"] == {"n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 99, "dtype": "bfloat16"}


def test_a_composite_config_names_each_part():
    line = summarize(PairConfig())
    assert line.startswith("PairConfig pair · text_config: n_embd=32")
    assert "· vision_config: " in line and line.endswith("dtype=bfloat16")


def test_it_is_ours_for_the_debugger_and_the_line_stays_short():
    config = TinyConfig()
    config.n_head = list(range(500))  # a per-stage list (Swin's num_heads) cannot stretch the line
    assert classify(config) == "config"
    line = summarize_if_ours(config)
    assert line is not None and len(line) <= LINE_LIMIT and "\n" not in line


class Hostile(PretrainedConfig):
    """Every read through its own code raises: the line is still made from what it stores."""

    def __init__(self):
        self.hidden_size = 32

    def __getattribute__(self, name):
        if name in ("__dict__", "__class__"):
            return object.__getattribute__(self, name)
        raise RuntimeError("no reads")


def test_a_config_whose_reads_raise_gets_a_line_and_keeps_its_state():
    config = Hostile()
    before = dict(object.__getattribute__(config, "__dict__"))
    assert summarize(config).startswith("Hostile hidden_size=32")
    assert object.__getattribute__(config, "__dict__") == before


def test_a_real_hugging_face_config():
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, vocab_size=99)
    line = summarize(config)
    assert line.startswith("BertConfig bert ")
    assert {"hidden_size=32", "num_hidden_layers=2", "num_attention_heads=2", "vocab_size=99"} <= set(line.split())
