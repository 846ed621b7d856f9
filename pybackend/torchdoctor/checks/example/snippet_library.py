"""The ``torchdoctor_example()`` snippet for a model class built from a config object (Hugging Face's
``config_class``), and hints from a model the user's file already built.

A Hugging Face class (``GPT2LMHeadModel``) says nothing in its own source about its vocabulary (the
``nn.Embedding`` is in ``GPT2Model``), so the snippet is written from its ``config_class`` instead,
and written to run as it is:

- a small config with the config's own argument names (``GPT2Config(vocab_size=100, n_embd=32,
  n_layer=2, n_head=2, n_positions=64)``), the vocabulary of the user's model when the file built
  one, special token ids inside that vocabulary, and ``pad_token_id=0`` when the config's default is None
  (``GPT2ForSequenceClassification`` finds each row's last token by it and refuses a batch of 8 without one);
- token ids ``torch.randint(0, config.vocab_size, (8, 16))``;
- labels by the head: the input ids for a causal LM (the model shifts them itself), the tokens for a
  masked LM, a target sequence for a sequence-to-sequence model, ``(8,)`` classes below
  ``config.num_labels`` for a sequence classifier; passed as ``labels=`` so the model's own loss is used;
- the import from the top-level package when it exports the class (``from transformers import
  GPT2LMHeadModel, GPT2Config``), else from the class's module.
"""

from __future__ import annotations

import inspect
import re
import sys
from typing import List

# (the value in the snippet, the argument's names in configs, the usual one first); one size per row,
# set by the first name the config takes (after its attribute_map: BART's num_hidden_layers is encoder_layers)
_SMALL = (
    (32, ("hidden_size", "n_embd", "d_model", "dim")),
    # encoder_layers: BART in transformers 4.x, whose attribute_map has no num_hidden_layers (5.x maps it)
    (2, ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers")),
    (2, ("decoder_layers",)),  # BART's decoder: 12 layers of 16 heads and 4096 wide (3.8M parameters) otherwise
    (2, ("num_attention_heads", "n_head", "num_heads", "n_heads")),
    (2, ("decoder_attention_heads",)),
    (2, ("num_key_value_heads",)),  # Mistral's 8, Qwen2's 32: the 2 heads must be a multiple of it
    # hidden / heads (Gemma's 256 would multiply every projection; Funnel's d_head, Reformer's attention_head_size)
    (16, ("head_dim", "d_head", "attention_head_size")),
    (16, ("rotary_dim",)),  # GPT-J's 64 does not fit in a head of 16
    # XLNet's and Funnel's d_inner, CTRL's dff: 4096 and 8192 wide otherwise (0.5M and 1M parameters)
    # Reformer's feed_forward_size (512)
    (64, ("intermediate_size", "n_inner", "d_ff", "ffn_dim", "encoder_ffn_dim", "d_inner", "dff", "feed_forward_size")),
    (64, ("decoder_ffn_dim",)),
    (64, ("max_position_embeddings", "n_positions")),
    (64, ("max_encoder_position_embeddings",)),  # LED's 16384 positions: 0.5M parameters of a table
    (64, ("max_decoder_position_embeddings",)),
    (16, ("attention_window",)),  # Longformer's and LED's 512: every batch padded to 512 tokens
    # MobileBERT's 128-wide embedding and bottleneck do not fit a hidden size of 32 (a negative width);
    # its LM head adds hidden - embedding_size columns, so not 32 either (an empty weight)
    (16, ("embedding_size",)),
    (32, ("intra_bottleneck_size",)),
    # Qwen2-MoE's 60 experts of 1408 and a shared one of 5632: 17M parameters; 8 experts keep every
    # model's top-k (at most 8) valid
    (8, ("num_experts",)),
    (64, ("moe_intermediate_size",)),
    (64, ("shared_expert_intermediate_size",)),
)
# GPT-Neo's pattern of global and local attention layers must have one entry per layer: 1 x 2 = 2
_LAYER_PATTERN = 'attention_types=[[["global", "local"], 1]]'
# Funnel's layers are counted by its blocks, (4, 4, 4): 12 layers where the snippet says 2
_BLOCKS = "block_sizes=[1, 1]"
SEQ_LEN = 16  # the snippet's tokens per row
# Reformer, in training: its axial position table must factor the sequence length exactly (4 x 4
# = SEQ_LEN) with widths summing to the hidden size (16 + 16 = 32); each attention layer cuts the
# sequence in chunks whose length must divide it; its depth is its list of attention layers (6).
_AXIAL = (
    "axial_pos_shape=[4, 4]",
    "axial_pos_embds_dim=[16, 16]",
    'attn_layers=["local", "lsh"]',
    "local_attn_chunk_length=8",
    "lsh_attn_chunk_length=8",
)
# Sizes a family needs beyond its config's names, by ``model_type``: CodeGen's model (not its
# config) splits the fused q/k/v projection into 4 groups, so its heads must be a multiple of 4,
# and the rotary part of each head (32 / 4 = 8 wide) cannot be wider than the head.
_FAMILY = {"codegen": ("n_head=4", "rotary_dim=8")}
_TOKEN_IDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")
VOCAB = 100  # the snippet's vocabulary when the user's file built no model to read it from
_CHOICES = 2  # a multiple-choice row's candidates
_CAUSAL = re.compile(r"(LMHeadModel|ModelWithLMHead|ForCausalLM)$")  # ReformerModelWithLMHead too


def config_class(cls):
    """The class's config class when it is built from one that has a vocabulary (Hugging Face), else None."""
    config = getattr(cls, "config_class", None)
    return config if inspect.isclass(config) and "vocab_size" in config_params(config) else None


def config_params(config) -> dict:
    try:
        return dict(inspect.signature(config.__init__).parameters)
    except (TypeError, ValueError):
        return {}


def importable_from(cls, name: str) -> str:
    """The top-level package when it exports ``cls`` as ``name`` (``transformers``), else ``cls.__module__``."""
    module = getattr(cls, "__module__", "") or ""
    top = sys.modules.get(module.split(".")[0])
    try:
        exported = top is not None and getattr(top, name, None) is cls
    except Exception:  # a lazy package that fails to import the name
        exported = False
    return module.split(".")[0] if exported else module


def instance_of(module, cls):
    """A model of class ``cls`` the user's file built at module level (``model = GPT2LMHeadModel(config)``)."""
    if module is None:
        return None
    return next((v for v in list(vars(module).values()) if isinstance(v, cls)), None)


def embedding_vocab(model) -> str | None:
    """``num_embeddings`` of the first ``nn.Embedding`` of a built model, as text."""
    import torch.nn as nn

    if model is None:
        return None
    first = next((m for m in model.modules() if isinstance(m, nn.Embedding)), None)
    return str(first.num_embeddings) if first is not None else None


def small_config(config, instance=None, class_name: str = "") -> list[str]:
    """``GPT2Config(vocab_size=100, n_embd=32, ...)``: sizes that train fast on a CPU, in the config's own
    names, as ``name=value`` arguments (``class_name``: the model's, for what its head needs)."""
    params = config_params(config)
    vocab = getattr(getattr(instance, "config", None), "vocab_size", None) or VOCAB
    args = [f"vocab_size={vocab}"] + small_sizes(config, params)
    if "attention_types" in params:
        args.append(_LAYER_PATTERN)
    if "block_sizes" in params:
        args.append(_BLOCKS)
    if "axial_pos_shape" in params:
        args += _AXIAL
    if "is_decoder" in params and _CAUSAL.search(class_name):
        args.append("is_decoder=True")  # Reformer's LM head refuses a config without it; BERT's warns
    args = _overridden(args, _FAMILY.get(str(getattr(config, "model_type", "")), ()))
    for name in _TOKEN_IDS:  # GPT-2's bos/eos 50256 lie outside a small vocabulary
        default = params[name].default if name in params else None
        if isinstance(default, int) and default >= vocab:
            args.append(f"{name}=0")
    if _pads_with_none(config, params):
        args.append("pad_token_id=0")  # GPT-2's None: its sequence classifier refuses a batch of more than one
    start = params.get("decoder_start_token_id")
    if getattr(params.get("is_encoder_decoder"), "default", False) is True and getattr(start, "default", None) is None:
        args.append("decoder_start_token_id=0")  # T5's: the decoder's first input, made from the labels
    return args


def small_sizes(config, params: dict, ints_only: bool = False) -> list[str]:
    """The ``_SMALL`` sizes the config takes, by its own names. ``ints_only`` (a vision config): only
    where its default is an int and its own name (Swin's heads per stage are a list; ConvNeXt's
    layers, aliased to its stage count, must match its lists of widths and depths)."""
    aliases = getattr(config, "attribute_map", None) or {}
    args, given = [], {"vocab_size"}
    for value, names in _SMALL:
        # the alias first (BART's num_hidden_layers is encoder_layers), else the name itself: Qwen3-MoE
        # maps num_experts to num_local_experts, yet takes num_experts
        name = next((c for n in names for c in (aliases.get(n, n), n) if c in params), None)
        if name is None or name in given:
            continue
        if ints_only and (not isinstance(params[name].default, int) or name not in names):
            continue
        given.add(name)
        args.append(f"{name}={value}")
    return args


def _overridden(args: list[str], overrides) -> list[str]:
    """``args`` with each ``name=value`` of ``overrides`` in place of the same name's, or added."""
    names = {o.split("=", 1)[0]: o for o in overrides}
    kept = [names.pop(a.split("=", 1)[0], a) for a in args]
    return kept + list(names.values())


def _pads_with_none(config, params: dict) -> bool:
    """Is the config's default ``pad_token_id`` None? Read from its signature (transformers 5.x),
    else from a default instance (4.x, the only one on Python 3.9, passes it to PretrainedConfig
    through ``**kwargs``); False when neither tells (no padding token to set)."""
    if "pad_token_id" in params:
        return params["pad_token_id"].default is None
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return False
    try:
        return getattr(config(), "pad_token_id", 0) is None
    except Exception:  # a config that cannot be built without arguments (a composite one)
        return False


def import_lines(cls, class_name: str, config: type, note: str = "") -> List[str]:
    """The snippet's imports of the class and its config: one line when one module has both.
    ``note`` (where the line goes, as the general snippet says it) follows the class's import."""
    here, there = importable_from(cls, class_name), importable_from(config, config.__name__)
    comment = f"  # {note}" if note else ""
    if here == there:
        return [f"from {here} import {class_name}, {config.__name__}{comment}"]
    return [f"from {here} import {class_name}{comment}", f"from {there} import {config.__name__}"]


def library_snippet(cls, class_name: str, example_function: str, instance=None) -> str:
    """The whole function to paste, for a class with a :func:`config_class`; it runs as written."""
    config = config_class(cls)
    imports = import_lines(cls, class_name, config)
    ids = "input_ids"
    labels, note = _labels(cls, class_name, ids)
    lines = ["import torch", "", *imports, "", ""]
    lines += [
        f"def {example_function}():",
        '    """Torch Doctor\'s checks call this: the model and one small batch."""',
        f"    config = {config.__name__}(  # small, so that the checks train it fast on a CPU",
        *wrapped(small_config(config, instance, class_name), "        "),
        "    )",
        f"    model = {class_name}(config)",
        f"    {ids} = torch.randint(0, config.vocab_size, {_ids_shape(class_name)})  # token ids below the vocabulary size: {_ids_note(class_name)}",
    ]
    if labels is None:
        lines.append(f'    return {{"model": model, "inputs": ({ids},)}}  # targets and loss inferred from the output')
    else:
        lines.append(f"    labels = {labels}  # {note}")
        lines.append(
            f'    return {{"model": model, "inputs": ({ids},), "targets": labels}}'
            "  # passed as forward(labels=targets): the model's own loss is used"
        )
    return "\n".join(lines) + "\n"


def _ids_shape(class_name: str) -> str:
    """A multiple-choice head reads (batch, choices, tokens): 2-d ids fail its view(-1, 16)."""
    return f"(8, {_CHOICES}, {SEQ_LEN})" if _multiple_choice(class_name) else f"(8, {SEQ_LEN})"


def _ids_note(class_name: str) -> str:
    return f"8 rows of {_CHOICES} choices of {SEQ_LEN}" if _multiple_choice(class_name) else f"8 rows of {SEQ_LEN}"


def _multiple_choice(class_name: str) -> bool:
    return class_name.endswith("ForMultipleChoice")


def wrapped(args: list[str], indent: str, width: int = 100) -> list[str]:
    lines = [indent]
    for a in args:
        if len(lines[-1]) + len(a) + 2 > width and lines[-1].strip():
            lines.append(indent)
        lines[-1] += a + ", "
    return [line.rstrip() for line in lines]


def _labels(cls, class_name: str, ids: str) -> tuple[str | None, str]:
    """The labels' expression and what they are, by the model's head; None when forward takes no labels."""
    try:
        takes = "labels" in inspect.signature(cls.forward).parameters
    except (TypeError, ValueError):
        takes = False
    if not takes:
        return None, ""
    if _CAUSAL.search(class_name):
        return f"{ids}.clone()", "the model shifts them itself: the next token at each position"
    if class_name.endswith("ForMaskedLM"):
        return f"{ids}.clone()", "the token at each position (mask some in real training)"
    if class_name.endswith("ForSequenceClassification"):
        return "torch.randint(0, config.num_labels, (8,))", "one class per sequence"
    if class_name.endswith("ForTokenClassification"):  # not the vocabulary: "Target 35 is out of bounds"
        return "torch.randint(0, config.num_labels, (8, 16))", "one class per token"
    if _multiple_choice(class_name):
        return f"torch.randint(0, {_CHOICES}, (8,))", "the right choice of each row"
    return "torch.randint(0, config.vocab_size, (8, 16))", "the target tokens"
