"""TD007 and a name that holds a loss tensor at one point and a number at another. The loss
handed to a backward helper (or backpropagated in place) is followed by ``running =
running.item()`` or a new ``float(...)`` under the same name: adding that to a total keeps no
graph. Adding the value itself, before it is turned into a number, is still reported."""

from __future__ import annotations

import pytest

from support.lint import hits

# The model, its optimizer and the backward helper both scripts share.
HEADER = """
import torch
from torch import nn

head = nn.Linear(3, 2)
sgd = torch.optim.SGD(head.parameters(), lr=0.1)


def apply_grads(objective, optim):
    optim.zero_grad()
    objective.backward()
    optim.step()

"""

SCRIPT = (
    HEADER
    + """
def epoch(rows):
    seen = 0.0
    for row in rows:
        running = head(row).abs().mean()
        {backprop}
        {convert}
        seen += running
    return seen
"""
)

HELPER = "apply_grads(running, sgd)"
DIRECT = "sgd.zero_grad(); running.backward(); sgd.step()"


def td007(backprop: str, convert: str):
    return [line for rule, line in hits(SCRIPT.format(backprop=backprop, convert=convert)) if rule == "TD007"]


@pytest.mark.parametrize("backprop", [HELPER, DIRECT])
@pytest.mark.parametrize("convert", ["running = running.item()", "running = float(running)"])
def test_the_name_rebound_to_a_number_after_the_backward_is_quiet(backprop, convert):
    assert td007(backprop, convert) == []


@pytest.mark.parametrize("backprop", [HELPER, DIRECT])
def test_the_backpropagated_tensor_itself_added_up_is_reported(backprop):
    assert td007(backprop, "pass") == [20]


OTHER_LOOP = (
    HEADER
    + """
def run(rows):
    for row in rows:
        running = head(row).abs().mean()
        apply_grads(running, sgd)
    sum_of = 0.0
    for row in rows:
        running = head(row).abs().mean().item()
        sum_of += running
    return sum_of
"""
)


def test_a_number_of_the_same_name_in_another_loop_is_quiet():
    assert [r for r, _ in hits(OTHER_LOOP) if r == "TD007"] == []


def test_the_value_before_it_is_scaled_for_the_helper_is_reported():
    text = SCRIPT.format(backprop="running = running / 4", convert="apply_grads(running, sgd)")
    text = text.replace("        seen += running\n", "").replace(
        "running = running / 4", "seen += running\n        running = running / 4"
    )
    assert [line for rule, line in hits(text) if rule == "TD007"] == [18]


def test_the_name_reused_for_a_scaled_number_never_handed_over_is_quiet():
    # ``x.item() * 2`` is not a plain release: the bindings tell the two values apart
    text = OTHER_LOOP.replace("running = head(row).abs().mean().item()", "running = head(row).abs().mean().item() * 2")
    assert [r for r, _ in hits(text) if r == "TD007"] == []
