"""TD010 beyond the loop body: ``eval()`` before a training loop that never calls ``train()``,
a model built fresh every trial; TD009 for a notebook's ``test_model(net, loader)``."""

from __future__ import annotations

import pytest

from support.lint import assert_linear, code, hits
from torchdoctor.lint import lint_source

EVAL_BEFORE = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.eval()  # left over from checking the initial loss
for step in range(100):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
"""


def test_eval_before_a_training_loop_that_never_calls_train():
    assert hits(EVAL_BEFORE, "TD010") == [("TD010", 6)]
    [finding] = [f for f in lint_source(code(EVAL_BEFORE)).all if f.rule_id == "TD010"]
    assert "before the training loop at line 7" in finding.message and "\n" not in finding.message


def test_eval_then_train_before_the_loop_is_fine():
    assert hits(EVAL_BEFORE.replace("model.eval()  #", "model.eval(); model.train()  #"), "TD010") == []


def test_eval_before_the_loop_of_a_model_without_dropout_or_batch_norm_changes_nothing():
    assert hits(EVAL_BEFORE.replace("nn.Dropout(0.5), ", ""), "TD010") == []


def test_a_model_built_fresh_every_trial_is_not_left_in_eval_mode():
    text = """
import torch
from torch import nn


def train(model, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()


def evaluate(model):
    model.eval()
    with torch.no_grad():
        return model(torch.randn(8, 4)).sum()


for trial in range(5):
    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
    train(net, 10)
    evaluate(net)
"""
    assert hits(text, "TD010") == []
    reused = text.replace(
        "for trial in range(5):\n    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))",
        "net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))\nfor trial in range(5):",
    )
    assert hits(reused, "TD010") == [("TD010", 22)]  # the same net: later trials train in eval mode


NOTEBOOK_TEST = """
import torch
from torch import nn


def test_model(net, loader):
    correct = 0
    for images, labels in loader:
        correct += (net(images).argmax(1) == labels).sum().item()
    return correct


net = nn.Linear(4, 2)
test_model(net, [])
"""


def test_a_notebooks_test_model_function_is_an_evaluation_loop():
    assert hits(NOTEBOOK_TEST, "TD009") == [("TD009", 8)]


def test_the_same_function_in_a_pytest_file_is_a_test_of_code():
    result = lint_source(code(NOTEBOOK_TEST), "/project/tests/test_training.py")
    assert [f.rule_id for f in result.all if f.rule_id == "TD009"] == []


TWO_PHASES = """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
prompt = torch.zeros(8, 4, requires_grad=True)
net.eval()  # phase 1 tunes the prompt only
first = torch.optim.Adam([prompt])
for step in range(10):
    first.zero_grad()
    net(prompt).pow(2).mean().backward()
    first.step()
net.train()  # phase 2 tunes the network
second = torch.optim.Adam(net.parameters())
for step in range(10):
    second.zero_grad()
    net(prompt.detach()).pow(2).mean().backward()
    second.step()
"""


def test_train_called_before_a_later_training_loop_makes_the_eval_a_phase():
    assert hits(TWO_PHASES, "TD010") == []


def test_train_called_after_the_only_training_loop_does_not_excuse_it():
    # The loop must tune the network too: over ``[prompt]`` alone the eval mode is right (a
    # frozen network, test_train_mode_tensor_optimizers.py).
    only_one = TWO_PHASES.split("second =")[0].replace("Adam([prompt])", "Adam([prompt, *net.parameters()])")
    assert hits(only_one, "TD010") == [("TD010", 6)]


def _td010_block(evaluates_first: bool) -> str:
    """A training loop that never calls ``.train()``, after a ``model.eval()`` when ``evaluates_first``."""
    return (
        "model{i} = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5))\n"
        "opt{i} = torch.optim.SGD(model{i}.parameters(), lr=0.1)\n"
        + ("model{i}.eval()\n" if evaluates_first else "")
        + "for step in range(2):\n"
        "    opt{i}.zero_grad()\n"
        "    model{i}(torch.randn(8, 4)).sum().backward()\n"
        "    opt{i}.step()\n"
    )


@pytest.mark.parametrize("evaluates_first", [False, True], ids=["no-eval", "eval-before-each-loop"])
def test_linear_in_the_length_of_a_long_script(evaluates_first):
    """Each loop looked back over every call before it (and, when reported, over every call and
    loop after it): 4x the blocks cost 16x, 14 s for an 8k-line script. Linear is ~4x."""
    header = "import torch\nfrom torch import nn\n"
    assert_linear("TD010", header, _td010_block(evaluates_first), per_block=1 if evaluates_first else 0)


# The linear-probe protocol (MoCo/SimSiam ``main_lincls.py`` shape): the backbone is frozen and
# the whole model kept in eval mode on purpose, so batch-norm statistics of the features never move.
LINEAR_PROBE = """
import torch
from torch import nn

backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
model = nn.Sequential(backbone, nn.Linear(8, 10))
for name, p in model.named_parameters():
    if not name.startswith("1."):
        p.requires_grad = False
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
criterion = nn.CrossEntropyLoss()


def probe_one_epoch(loader):
    model.eval()  # frozen features: batch-norm statistics must not move
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run(loader, epochs):
    for epoch in range(epochs):
        probe_one_epoch(loader)
"""


def test_a_linear_probe_keeps_its_frozen_model_in_eval_mode_on_purpose():
    assert hits(LINEAR_PROBE, "TD010") == []


@pytest.mark.parametrize(
    "freeze",
    [
        "model.requires_grad_(False)",
        "model[0].requires_grad_(False)",
        "for p in backbone.parameters():\n    p.requires_grad = False",
    ],
)
def test_every_way_of_freezing_part_of_the_model_counts(freeze):
    text = LINEAR_PROBE.replace(
        'for name, p in model.named_parameters():\n    if not name.startswith("1."):\n        p.requires_grad = False',
        freeze,
    )
    assert freeze in text
    if freeze.startswith("for p in backbone"):
        # ``backbone`` is another name for model[0]: the rule compares spellings, so it does not
        # know and still reports (the eval in the helper, the loop calling it), as unfrozen
        assert [rule for rule, _ in hits(text, "TD010")] == ["TD010", "TD010"]
    else:
        assert hits(text, "TD010") == []


def test_without_freezing_the_same_loops_are_reported():
    unfrozen = LINEAR_PROBE.replace("        p.requires_grad = False", "        p.requires_grad = True")
    lines = code(unfrozen).splitlines()
    expected = [
        ("TD010", n + 1)
        for n, line in enumerate(lines)
        if "model.eval()" in line or line.strip() == "probe_one_epoch(loader)"
    ]
    assert len(expected) == 2 and hits(unfrozen, "TD010") == expected
