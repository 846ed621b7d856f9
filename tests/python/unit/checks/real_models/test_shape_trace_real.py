"""The shape trace on real-model shapes (issue 14): Hugging Face models called with a keyword
``**batch`` show their keyword inputs by name and their ``ModelOutput`` by key; a siamese network
shows its two positional images. Kinds and names are asserted, not sizes a config could change."""

from __future__ import annotations

import pytest
import real_models as M
import torch

from support.checks import new_result, quiet
from torchdoctor.checks import example as E
from torchdoctor.checks import shape_trace


def trace(returned: dict) -> dict:
    torch.manual_seed(0)
    ex = E.from_user_function(lambda: returned, "example.py", type(returned["model"]), {})
    assert ex is not None
    ex = E.complete(ex, {})
    return shape_trace.run(ex, {}, quiet, new_result("shapes", type(ex.model).__name__))


@pytest.mark.parametrize(
    "make, names, keys",
    [
        (M.example_hf_gpt2, ["input_ids", "attention_mask", "labels"], ["loss", "logits"]),
        (M.example_hf_bert, ["input_ids", "attention_mask", "token_type_ids", "labels"], ["loss", "logits"]),
        (M.example_hf_t5, ["input_ids", "attention_mask", "labels"], ["loss", "logits", "encoder_last_hidden_state"]),
        (M.example_hf_vit, ["pixel_values", "labels"], ["loss", "logits"]),
    ],
    ids=["GPT2LMHeadModel", "BertForSequenceClassification", "T5ForConditionalGeneration", "ViTForImageClassification"],
)
def test_hugging_face_keyword_inputs_are_shown_by_name_and_the_model_output_by_key(make, names, keys):
    pytest.importorskip("transformers")
    r = trace(make())
    assert r["verdict"] == "PASS", r["headline"]
    model = r["table"]["rows"][0]
    assert model[0] == "(model)" and model[2] == 0
    shown = [part.split("=")[0] for part in model[3].split("), ")]
    assert shown == names  # as called: input_ids=(...), ..., not "()" for a keyword-only call
    assert model[4].startswith("{")  # a ModelOutput, by key
    assert set(keys) <= {part.split(":")[0] for part in model[4][1:].split(", ") if ":" in part}
    assert r["headline"].startswith(f"The forward runs: {names[0]}=(")
    assert model[6] == "float32"  # the first tensor of the output (the loss)
    inner = [row for row in r["table"]["rows"] if row[2] > 0]
    assert inner and all(row[4] != "—" for row in inner)
    # the batch is read from the keyword inputs, so the batch checks run: the samples stay apart
    assert r["details"]["batchSize"] == M.BATCH and r["details"]["samplesMix"] is False


def test_siamese_network_shows_its_two_images_and_one_output():
    r = trace(M.example_siamese())
    assert r["verdict"] == "PASS", r["headline"]
    rows = r["table"]["rows"]
    model, tower = rows[0], [row for row in rows if row[0] == "tower"]
    assert model[3].count("(") == 2 and "=" not in model[3]  # two positional tensors
    assert model[3].split("), ")[0] + ")" == model[3].split("), ")[1]  # the same image shape twice
    assert len(tower) == 2  # one tower, called once per image
    assert not model[4].startswith("{") and model[4].count("(") == 1  # one tensor out
    assert r["details"]["batchSize"] == M.BATCH
