"""The needs-example snippet of Hugging Face heads and families beyond the first eight: executed as
written, it builds a small model whose forward, given the snippet's labels, returns a finite loss.
Before: a token classifier got labels below the vocabulary ("Target 35 is out of bounds"), a
multiple-choice head 2-d ids (its view(-1, 16) failed), MobileBERT a negative width, and CTRL, XLNet,
LED, Funnel and the mixtures of experts 0.5M to 17M parameters; and an installed vision class was
sent to edit the library's own modeling file."""

from __future__ import annotations

import math

import pytest
import torch

from torchdoctor.checks.example.snippet_library import library_snippet

CLASSES = [
    "BertForTokenClassification",
    "BertForMultipleChoice",
    "MobileBertForMaskedLM",
    "XLNetLMHeadModel",
    "CTRLLMHeadModel",
    "LEDForConditionalGeneration",
    "FunnelForMaskedLM",
    "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM",
    # Reformer's axial positions did not factor the 16 tokens nor sum to the width, and its LM head
    # wants is_decoder; CodeGen's 2 heads did not split into its 4 q/k/v groups
    "ReformerModelWithLMHead",
    "ReformerForMaskedLM",
    "CodeGenForCausalLM",
]


def _example(class_name: str) -> dict:
    """What the pasted snippet's ``torchdoctor_example()`` returns, for a transformers class."""
    transformers = pytest.importorskip("transformers")
    cls = getattr(transformers, class_name, None)
    if cls is None:
        pytest.skip(f"{class_name} is not in this transformers")
    scope: dict = {}
    exec(compile(library_snippet(cls, class_name, "torchdoctor_example"), "snippet.py", "exec"), scope)
    return scope["torchdoctor_example"]()


@pytest.mark.parametrize("class_name", CLASSES)
def test_the_snippet_runs_small_with_labels_the_head_accepts(class_name: str):
    torch.manual_seed(0)
    ex = _example(class_name)
    model = ex["model"].train()  # as the checks run it: Reformer's length rules hold in training
    params = list(model.parameters())
    assert sum(p.numel() for p in params) < 150_000  # small, as the snippet says
    assert all(p.numel() for p in params)  # no layer left empty (MobileBERT's head at embedding_size=32)
    out = model(*ex["inputs"], labels=ex["targets"])
    assert out.loss is not None and math.isfinite(out.loss.item())


@pytest.mark.parametrize("class_name", ["ReformerModel", "CodeGenModel"])
def test_a_bare_model_of_those_families_runs_its_batch(class_name: str):
    """No head, no labels: the snippet's batch goes through the trunk in training mode."""
    ex = _example(class_name)
    assert "targets" not in ex
    out = ex["model"].train()(*ex["inputs"])
    assert out.last_hidden_state.shape[:2] == ex["inputs"][0].shape


def test_an_installed_class_without_a_vocabulary_is_not_sent_to_edit_the_library(tmp_path):
    """ResNetForImageClassification built in the user's file: its snippet said the import was "not
    needed in transformers.models.resnet.modeling_resnet.py itself", a file the user never edits."""
    pytest.importorskip("transformers")
    from torchdoctor.checks import example as E

    path = tmp_path / "vision.py"
    path.write_text(
        "from transformers import ResNetConfig, ResNetForImageClassification\n\n"
        "model = ResNetForImageClassification(ResNetConfig(embedding_size=8, hidden_sizes=[8], depths=[1]))\n"
    )
    with pytest.raises(E.ExampleError) as info:
        E.build(E.load_user_module(str(path), path.read_text()), "ResNetForImageClassification", {})
    snippet = info.value.snippet or ""
    assert "from transformers import ResNetForImageClassification" in snippet
    assert "modeling_resnet.py itself" not in snippet and "as your file imports it" in snippet
    compile(snippet, "snippet.py", "exec")
