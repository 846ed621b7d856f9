"""The shape trace's sample-mixing probe on models called the Hugging Face way, with keyword inputs
(``model(input_ids=..., attention_mask=..., labels=...)``): the batch is read from the keyword inputs,
so the probe runs on them. Each buggy model below is a mistake people make in real code, trains
without an error and has a fixed twin that must stay PASS (a false alarm is as bad as a miss)."""

from __future__ import annotations

import pytest
import real_models as M
import torch
import torch.nn as nn
import torch.nn.functional as F

from support.checks import new_result, quiet
from torchdoctor.checks import example as E
from torchdoctor.checks import shape_trace

CLASSES = 3


class ContextLM(nn.Module):
    """A token model that adds a sentence context to every position; the bug averages over dim 0
    (the batch) where dim 1 (the tokens) was meant, and the (T, E) mean broadcasts without an error."""

    def __init__(self, bug: bool = True):
        super().__init__()
        self.bug = bug
        self.emb = nn.Embedding(M.VOCAB, 32)
        self.block = nn.TransformerEncoderLayer(32, 2, 64, dropout=0.1, batch_first=True)
        self.lm_head = nn.Linear(32, M.VOCAB)

    def forward(self, input_ids, attention_mask=None, labels=None):
        h = self.emb(input_ids)
        context = h.mean(0) if self.bug else h.mean(1, keepdim=True)
        padding = None if attention_mask is None else attention_mask == 0
        logits = self.lm_head(self.block(h + context, src_key_padding_mask=padding))
        loss = None if labels is None else F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        return {"loss": loss, "logits": logits}


class PoolingClassifier(nn.Module):
    """Attention pooling; the bug flattens the scores across the batch (``view(-1)``), so one softmax
    runs over every token of the batch instead of one per sequence."""

    def __init__(self, bug: bool = True):
        super().__init__()
        self.bug = bug
        self.emb = nn.Embedding(M.VOCAB, 32)
        self.score = nn.Linear(32, 1)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, input_ids, attention_mask, labels=None):
        h = self.emb(input_ids)
        scores = self.score(h).squeeze(-1).masked_fill(attention_mask == 0, -1e9)
        weights = scores.view(-1).softmax(0).view_as(scores) if self.bug else scores.softmax(-1)
        logits = self.head((weights.unsqueeze(-1) * h).sum(1))
        loss = None if labels is None else F.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


class GPT2MeanPool(nn.Module):
    """A Hugging Face GPT2Model under a mean-pooling classifier; the bug divides by ``mask.sum()``, the
    tokens of the whole batch, where ``mask.sum(1, keepdim=True)`` (this sequence's) was meant."""

    def __init__(self, bug: bool = True):
        super().__init__()
        from transformers import GPT2Config, GPT2Model

        self.bug = bug
        self.gpt2 = GPT2Model(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=M.VOCAB, n_positions=32))
        self.head = nn.Linear(32, CLASSES)

    def forward(self, input_ids, attention_mask, labels=None):
        h = self.gpt2(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(h.dtype)
        count = mask.sum() if self.bug else mask.sum(1)
        logits = self.head((h * mask).sum(1) / count)
        loss = None if labels is None else F.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


class AttentionLM(nn.Module):
    """Self-attention by ``nn.MultiheadAttention``, which reads (seq, batch, embed) unless
    ``batch_first=True``; fed (batch, seq, embed) without it, it attends across the samples."""

    def __init__(self, batch_first: bool = False):
        super().__init__()
        self.emb = nn.Embedding(M.VOCAB, 32)
        self.attn = nn.MultiheadAttention(32, 2, batch_first=batch_first)
        self.lm_head = nn.Linear(32, M.VOCAB)

    def forward(self, input_ids, labels=None):
        h = self.emb(input_ids)
        logits = self.lm_head(h + self.attn(h, h, h, need_weights=False)[0])
        loss = None if labels is None else F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        return {"loss": loss, "logits": logits}


def padded_batch():
    """Token ids and an attention mask with some padding at the end of some rows, as a tokenizer gives."""
    ids, _ = M.token_batch(seed=12)
    mask = torch.ones_like(ids)
    mask[1::2, -4:] = 0  # every other sequence is shorter
    return ids, mask


def trace(model: nn.Module, **kwargs) -> dict:
    torch.manual_seed(0)
    returned = {"model": model, "kwargs": kwargs}
    ex = E.from_user_function(lambda: returned, "example.py", type(model), {})
    assert ex is not None and ex.inputs == ()  # keyword inputs only: the Hugging Face way
    ex = E.complete(ex, {})
    r = shape_trace.run(ex, {}, quiet, new_result("shapes", type(model).__name__))
    assert r["details"]["batchSize"] == M.BATCH, r["details"]  # read from the keyword inputs
    return r


def keyword_batch(model_class) -> dict:
    ids, mask = padded_batch()
    if model_class is AttentionLM:
        return {"input_ids": ids, "labels": ids}
    labels = ids if model_class is ContextLM else torch.arange(M.BATCH) % CLASSES
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def test_tiny_gpt2_called_with_keyword_inputs_keeps_its_samples_apart():
    pytest.importorskip("transformers")
    r = trace(M.hf_gpt2(), **M.example_hf_gpt2()["kwargs"])
    assert r["verdict"] == "PASS", r["sentences"]
    assert r["details"]["samplesMix"] is False  # the probe ran and found each sample on its own
    assert r["sentences"] == []


@pytest.mark.parametrize(
    "model_class, before",
    [(ContextLM, "block"), (PoolingClassifier, "head"), (GPT2MeanPool, "head")],
    ids=["mean over dim 0", "view(-1) across the batch", "GPT2Model, mask.sum() of the batch"],
)
def test_a_forward_that_mixes_the_batch_is_flagged_where_it_does(model_class, before):
    if model_class is GPT2MeanPool:
        pytest.importorskip("transformers")
    r = trace(model_class(bug=True), **keyword_batch(model_class))
    assert r["verdict"] == "WARN"
    assert r["details"]["samplesMix"] is True and r["details"]["samplesMixAt"] == before
    first, where = r["sentences"]
    assert first.startswith(f"The samples of the batch mix: replacing only sample {M.BATCH}'s inputs")
    assert "changed the prediction for samples 1-" in first  # the others moved
    assert where.startswith(f"It happens in the forward of {model_class.__name__} itself, before it calls `{before}`")
    assert "over dim 0" in where and "view(-1)" in where

    fixed = trace(model_class(bug=False), **keyword_batch(model_class))
    assert fixed["verdict"] == "PASS" and fixed["details"]["samplesMix"] is False, fixed["sentences"]


def test_attention_without_batch_first_is_named_with_both_readings():
    r = trace(AttentionLM(batch_first=False), **keyword_batch(AttentionLM))
    assert r["verdict"] == "WARN" and r["details"]["samplesMixAt"] == "attn"
    where = r["sentences"][1]
    assert where.startswith("It starts in `attn` (MultiheadAttention, batch_first=False)")
    assert "Pass batch_first=True" in where and "if dim 0 is the sequence by design" in where
    fixed = trace(AttentionLM(batch_first=True), **keyword_batch(AttentionLM))
    assert fixed["verdict"] == "PASS" and fixed["details"]["samplesMix"] is False
