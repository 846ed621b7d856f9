"""Whether eval mode changes a model (lint/modes.py), for TD008/TD010: a GPT written without
dropout or batch-norm, whose ``from_pretrained`` builds the class itself inside its body, behaves the same in
both modes (its self-construction adds no layer), so leaving it in train mode for validation is
no bug; the same GPT with a dropout layer is still reported."""

from __future__ import annotations

from support.lint import hits

GPT = """
import torch
from torch import nn


class TinyGPT(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab){extra}

    @classmethod
    def from_pretrained(cls, name):
        model = TinyGPT(256, 64)
        model.load_state_dict(torch.load(name, weights_only=True))
        return model

    def forward(self, idx):
        return self.head(self.norm({embedded}))


def run(model, batches, val_batches, opt):
    for step in range(100):
        if step % 10 == 0:
            with torch.no_grad():
                for x, y in val_batches:
                    print(nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten()).item())
        x, y = batches[step]
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad()


net = TinyGPT(256, 64)
run(net, [], [], torch.optim.AdamW(net.parameters()))
"""


def td008(extra: str, embedded: str):
    return hits(GPT.format(extra=extra, embedded=embedded), "TD008")


def test_a_model_without_mode_dependent_layers_building_itself_needs_no_eval():
    assert td008("", "self.embed(idx)") == []


def test_the_same_model_with_dropout_is_still_reported():
    assert [rule for rule, _ in td008("\n        self.drop = nn.Dropout(0.1)", "self.drop(self.embed(idx))")] == [
        "TD008"
    ]
