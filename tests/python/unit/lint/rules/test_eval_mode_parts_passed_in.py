"""TD008/TD010 on a model assembled from parts built beside it: ``Translator(reader, writer)``
stores the two modules it is given, so their dropout is the translator's, and an evaluation
without ``eval()`` (or a training loop left in eval mode) changes its results. Parts without a
mode-dependent layer leave the assembled model mode-free: the rules stay quiet."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn


class Reader(nn.Module):
    def __init__(self, vocab, width, drop):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = {layer}

    def forward(self, tokens):
        return self.drop(self.embed(tokens)).mean(0)


class Writer(nn.Module):
    def __init__(self, width, vocab):
        super().__init__()
        self.out = nn.Linear(width, vocab)

    def forward(self, state):
        return self.out(state)


class Translator(nn.Module):
    def __init__(self, reader, writer):
        super().__init__()
        self.reader = reader
        self.writer = writer

    def forward(self, tokens):
        return self.writer(self.reader(tokens))


def evaluate(model, pairs, loss_fn):
{switch}    total = 0.0
    with torch.no_grad():
        for source, target in pairs:
            total += loss_fn(model(source), target).item()
    return total


reader = Reader(500, 64, 0.3)
writer = Writer(64, 500)
model = Translator(reader, writer)
optimizer = torch.optim.Adam(model.parameters())
loss_fn = nn.CrossEntropyLoss()


def fit(train_pairs, valid_pairs, epochs):
    for epoch in range(epochs):
        model.train()
        for source, target in train_pairs:
            optimizer.zero_grad()
            loss_fn(model(source), target).backward()
            optimizer.step()
        print(evaluate(model, valid_pairs, loss_fn))
"""


def td008(layer: str, switch: str):
    text = SCRIPT.format(layer=layer, switch=switch)
    return [rule for rule, _ in hits(text) if rule == "TD008"]


def test_dropout_in_a_part_passed_to_the_constructor_makes_eval_matter():
    assert td008("nn.Dropout(drop)", "") == ["TD008"]


def test_the_evaluation_that_switches_to_eval_is_quiet():
    assert td008("nn.Dropout(drop)", "    model.eval()\n") == []


def test_parts_without_a_mode_dependent_layer_leave_the_model_mode_free():
    assert td008("nn.Identity()", "") == []


def test_training_left_in_the_eval_mode_of_the_evaluation_is_reported():
    text = SCRIPT.format(layer="nn.Dropout(drop)", switch="    model.eval()\n").replace("        model.train()\n", "")
    assert [rule for rule, _ in hits(text) if rule == "TD010"] == ["TD010"]


_LOOP = """

def evaluate(m, data):
    total = 0.0
    with torch.no_grad():
        for x, y in data:
            total += loss_fn(m(x), y).item()
    return total


def fit(train, valid, epochs):
    for e in range(epochs):
        model.train()
        for x, y in train:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
        print(evaluate(model, valid))
"""


def test_a_parameter_or_a_loss_handed_to_the_constructor_is_no_layer():
    script = (
        """
import torch
from torch import nn


class Weighted(nn.Module):
    def __init__(self, weight, criterion):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.weight = weight

    def forward(self, x):
        return self.fc(x) * self.weight


model = Weighted(nn.Parameter(torch.ones(2)), nn.CrossEntropyLoss())
opt = torch.optim.Adam(model.parameters())
loss_fn = nn.CrossEntropyLoss()
"""
        + _LOOP
    )
    assert [rule for rule, _ in hits(script) if rule == "TD008"] == []


def test_parts_shared_by_many_models_are_judged_once_and_deep_nesting_is_no_dropout():
    levels = ["m0 = nn.Linear(8, 8)"]
    levels += [f"m{i} = Combine(" + ", ".join([f"m{i - 1}"] * 8) + ")" for i in range(1, 8)]
    script = (
        "import torch\nfrom torch import nn\n\n\nclass Combine(nn.Module):\n"
        "    def __init__(self, a, b, c, d, e, f, g, h):\n        super().__init__()\n"
        "        self.a, self.b = a, b\n        self.fc = nn.Linear(8, 8)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n\n\n"
        + "\n".join(levels)
        + "\nmodel = m7\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nloss_fn = nn.MSELoss()\n"
        + _LOOP
    )
    # 8**7 paths through the shared parts if each were judged again; all Linear: mode-free
    assert [rule for rule, _ in hits(script) if rule == "TD008"] == []
