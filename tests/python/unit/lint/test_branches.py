"""Names bound differently on different paths (lint/values.py ``alternatives``).

``if args.model == "Transformer": model = ... else: model = ...`` leaves two models after the
``if``; the loss rules report the path whose output is wrong for the loss (naming it), and stay
silent when every path is right, or when the wrong pairing never happens because the
criterion is chosen in the same branch as the model.
"""

from __future__ import annotations

import pytest

from torchdoctor.lint import lint_source

MODELS = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)


class LogProbs(Probs):
    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)


class Logits(Probs):
    def forward(self, x):
        return self.fc(x)
"""

LOOP = """
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
"""


def lint(choose: str):
    text = MODELS + "\n\ndef run(kind, loader):\n" + choose + LOOP
    result = lint_source(text, "<branches>")
    assert result.internal_errors == []
    return [(f.rule_id, f.message) for f in result.all], text.splitlines()


def loss_line(lines):
    return next(i for i, line in enumerate(lines, 1) if "loss = criterion" in line)


@pytest.mark.parametrize("broken_first", [True, False])
def test_the_broken_branch_is_reported_and_named(broken_first):
    first, second = ("Probs", "Logits") if broken_first else ("Logits", "Probs")
    found, lines = lint(
        f"    if kind == 'a':\n        model = {first}()\n    else:\n        model = {second}()\n"
        "    criterion = nn.CrossEntropyLoss()\n"
    )
    ((rule, message),) = found
    assert rule == "TD003" and "softmax probabilities" in message
    probs_line = next(i for i, line in enumerate(lines, 1) if "model = Probs()" in line)
    if broken_first:  # the `else` binding is the one read by default: the `if` one is a path
        assert f"on the path where `model` is `Probs()` (line {probs_line})" in message
    else:
        assert "on the path" not in message


def test_every_branch_healthy_is_silent():
    found, _ = lint(
        "    if kind == 'a':\n        model = Logits()\n    else:\n        model = nn.Sequential(nn.Linear(4, 3))\n"
        "    criterion = nn.CrossEntropyLoss()\n"
    )
    assert found == []


def test_a_criterion_chosen_with_the_model_in_the_same_branch_is_not_mixed_with_the_other():
    # LogProbs + NLLLoss on one path, Logits + CrossEntropyLoss on the other: both right. A
    # union of the bindings would pair LogProbs with CrossEntropyLoss, which never happens.
    found, _ = lint(
        "    if kind == 'a':\n        model = LogProbs()\n        criterion = nn.NLLLoss()\n"
        "    else:\n        model = Logits()\n        criterion = nn.CrossEntropyLoss()\n"
    )
    assert found == []


def test_a_conditional_rebinding_leaves_both_values():
    found, _ = lint(
        "    model = Logits()\n    if kind == 'a':\n        model = Probs()\n    criterion = nn.CrossEntropyLoss()\n"
    )
    assert [rule for rule, _ in found] == ["TD003"]


def test_an_unconditional_rebinding_replaces_the_value():
    found, _ = lint("    model = Probs()\n    model = Logits()\n    criterion = nn.CrossEntropyLoss()\n")
    assert found == []


def test_a_global_model_chosen_in_branches_then_reloaded_is_seen_from_a_function():
    # The word_language_model shape: the model is chosen by a flag at module level, reloaded
    # with torch.load after training, and used by train() / evaluate() through the global.
    text = (
        MODELS
        + "\nimport sys\nif sys.argv[1] == 'probs':\n    model = Probs()\nelse:\n    model = Logits()\n"
        + "criterion = nn.CrossEntropyLoss()\n\n\ndef evaluate(loader):\n    total = 0.0\n"
        + "    with torch.no_grad():\n        for x, y in loader:\n            total += criterion(model(x), y).item()\n"
        + "    return total\n\n\nwith open('model.pt', 'rb') as f:\n    model = torch.load(f, weights_only=False)\n"
    )
    found = [(f.rule_id, f.line) for f in lint_source(text, "<global>").all if f.rule_id == "TD003"]
    assert found == [("TD003", text.splitlines().index("            total += criterion(model(x), y).item()") + 1)]


GPT_MODEL = """
import torch
from torch import nn


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.head = nn.Linear(8, 8)

    def forward(self, idx, targets=None):
        logits = self.head(idx)
        return logits, nn.functional.cross_entropy(logits, targets)

    @classmethod
    def from_pretrained(cls, name):
        return cls(None)
"""

GPT_TRAIN = """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from model import GPT

init_from = "scratch"
ddp = False
if init_from == "scratch":
    model = GPT(None)
elif init_from.startswith("gpt2"):
    model = GPT.from_pretrained(init_from)
model = torch.compile(model)
if ddp:
    model = DDP(model, device_ids=[0])
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(10):
    X, Y = get_batch()
{forward}
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
"""


@pytest.mark.parametrize(
    "forward, expected",
    [
        ("    logits, loss = model(X, Y)", []),
        ("    with torch.no_grad():\n        logits, loss = model(X, Y)", ["TD013"]),
    ],
)
def test_a_model_chosen_among_branches_and_class_method_constructors_is_a_model(tmp_path, forward, expected):
    # The nanoGPT shape: GPT(...) or GPT.from_pretrained(...) by a flag, then compiled and
    # wrapped in DDP under an `if`; the forward pass moved under no_grad loses every gradient.
    (tmp_path / "model.py").write_text(GPT_MODEL, encoding="utf-8")
    train = tmp_path / "train.py"
    train.write_text(GPT_TRAIN.format(forward=forward), encoding="utf-8")
    found = lint_source(train.read_text(encoding="utf-8"), str(train))
    assert found.internal_errors == []
    assert [f.rule_id for f in found.all] == expected


RNN_OR_TRANSFORMER = """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(8, 8))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
transformer = True
for data, targets in batches():
    optimizer.zero_grad()
    if transformer:
{first}
        output = output.view(-1, 8)
    else:
        output, hidden = model(data), None
    loss = criterion(output, targets)
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "first, expected",
    [
        ("        output = model(data)", []),
        ("        with torch.no_grad():\n            output = model(data)", ["TD013"]),
    ],
)
def test_a_forward_under_no_grad_in_one_branch_is_found_through_the_other_branchs_binding(first, expected):
    # word_language_model's shape: `output` comes from the Transformer branch or the RNN
    # branch; the no-grad forward is in the branch that is not the last binding.
    found = lint_source(RNN_OR_TRANSFORMER.format(first=first), "<wlm>")
    assert [f.rule_id for f in found.all] == expected


BUILD_NANOGPT = """
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
ddp = False
model = nn.Sequential(nn.Linear(8, 8))
if ddp:
    model = DDP(model, device_ids=[0])
raw_model = model.module if ddp else model
optimizer = raw_model.configure_optimizers(weight_decay=0.1)
for step in range(100):
    if step % 10 == 0:
        model.eval()
        with torch.no_grad():
            logits, loss = model(xval)
        model.train()
    optimizer.zero_grad()
    for micro_step in range(4):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
{forward}
        loss = loss / 4
        loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "forward, expected",
    [
        ("            logits, loss = model(x, y)", []),
        ("            with torch.no_grad():\n                logits, loss = model(x, y)", ["TD013"]),
    ],
)
def test_a_binding_inside_a_with_block_replaces_the_earlier_ones(forward, expected):
    # build-nanogpt's shape: the validation forward under no_grad binds `loss` earlier in the
    # same loop; the training forward inside `with torch.autocast` always runs after it, so only
    # a no_grad around the training forward loses gradients. The optimizer comes from
    # `raw_model.configure_optimizers()`, `raw_model` being the model unwrapped from DDP.
    found = lint_source(BUILD_NANOGPT.format(forward=forward), "<build-nanogpt>")
    assert [f.rule_id for f in found.all] == expected
