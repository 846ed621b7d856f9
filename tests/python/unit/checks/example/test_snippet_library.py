"""``snippet_library.small_config`` on config classes of both shapes transformers has had: a
keyword in the signature (5.x) and one passed on through ``**kwargs`` (4.x, the only transformers
Python 3.9 installs). Plain classes written here: no transformers needed, the same on every version."""

from torchdoctor.checks.example.snippet_library import small_config


class SignatureConfig:
    """5.x: ``pad_token_id`` is a keyword of its own, None by default (GPT-2)."""

    attribute_map = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer"}

    def __init__(self, vocab_size=50257, n_embd=768, n_layer=12, n_head=12, pad_token_id=None, **kwargs):
        self.pad_token_id = pad_token_id


class KeywordsConfig:
    """4.x: ``pad_token_id`` reaches the base class through ``**kwargs``; a default instance says None."""

    attribute_map = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer"}

    def __init__(self, vocab_size=50257, n_embd=768, n_layer=12, n_head=12, **kwargs):
        self.pad_token_id = kwargs.pop("pad_token_id", None)


class PaddedConfig(KeywordsConfig):
    """A model whose config already has a padding token: nothing to add."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.pad_token_id = 1


class NeedsArgumentsConfig:
    """A composite config that cannot be built without its parts: no default to read."""

    def __init__(self, encoder, decoder, **kwargs):
        self.pad_token_id = None


class EncoderLayersConfig:
    """BART in 4.x: ``encoder_layers`` is a keyword, and no attribute_map entry points to it."""

    attribute_map = {"hidden_size": "d_model"}

    def __init__(self, vocab_size=50265, d_model=1024, encoder_layers=12, decoder_layers=12, pad_token_id=1, **kwargs):
        self.pad_token_id = pad_token_id


def test_a_padding_token_is_given_where_the_default_has_none_by_signature_or_by_instance():
    assert "pad_token_id=0" in small_config(SignatureConfig)
    assert "pad_token_id=0" in small_config(KeywordsConfig)


def test_no_padding_token_where_the_config_has_one_or_cannot_tell():
    assert not any(a.startswith("pad_token_id") for a in small_config(PaddedConfig))
    assert not any(a.startswith("pad_token_id") for a in small_config(NeedsArgumentsConfig))


def test_sizes_go_to_the_configs_own_names():
    assert {"n_embd=32", "n_layer=2", "n_head=2"} <= set(small_config(KeywordsConfig))
    assert {"d_model=32", "encoder_layers=2", "decoder_layers=2"} <= set(small_config(EncoderLayersConfig))


class MappedAwayConfig:
    """Qwen3-MoE in 5.x: attribute_map sends ``num_experts`` to ``num_local_experts``, yet the
    signature takes ``num_experts``; and the widths other families name their own way."""

    attribute_map = {"num_experts": "num_local_experts"}

    def __init__(self, vocab_size=151936, num_experts=128, moe_intermediate_size=768, d_inner=4096, embedding_size=128):
        pass


def test_a_size_whose_alias_the_signature_lacks_goes_to_its_own_name():
    args = set(small_config(MappedAwayConfig))
    assert {"num_experts=8", "moe_intermediate_size=64", "d_inner=64", "embedding_size=16"} <= args
