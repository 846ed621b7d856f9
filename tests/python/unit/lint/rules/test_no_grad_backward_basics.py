"""TD013: backward() inside torch.no_grad() (moved from test_lint_misc_rules.py)."""

import pytest

from support.lint import findings, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD013 --------------------------------------------------------------------------------


def test_backward_inside_no_grad_block():
    text = T + "with torch.no_grad():\n    loss = crit(model(x), y)\n    loss.backward()\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.line, finding.severity) == ("TD013", 6, "error")


@pytest.mark.parametrize("head", ["@torch.no_grad()", "@torch.inference_mode()"])
def test_backward_in_a_no_grad_function(head):
    text = T + f"{head}\ndef step(x):\n    model(x).sum().backward()\n"
    assert hits(text) == [("TD013", 6)]


@pytest.mark.parametrize(
    "text",
    [
        "with torch.no_grad():\n    with torch.enable_grad():\n        loss.backward()\n",
        "with torch.set_grad_enabled(True):\n    loss.backward()\n",
        "with torch.set_grad_enabled(is_train):\n    loss.backward()\n",
        "with torch.no_grad():\n    def later():\n        loss.backward()\n",
        "with torch.inference_mode(False):\n    loss.backward()\n",
    ],
)
def test_backward_with_grad_enabled_is_fine(text):
    assert hits(T + text) == []


@pytest.mark.parametrize(
    "head, call",
    [
        ("", "torch.autograd.backward(crit(model(x), y))"),
        ("from torch.autograd import backward\n", "backward(crit(model(x), y))"),
        ("from torch.autograd import backward as bw\n", "bw(crit(model(x), y))"),
        ("", "self.manual_backward(crit(model(x), y))"),
    ],
)
def test_every_spelling_of_backward_is_found(head, call):
    # The rule looks backward calls up by name (a long script has tens of thousands of calls):
    # an alias of torch.autograd.backward must still be one.
    text = T + head + f"with torch.no_grad():\n    {call}\n"
    assert [rule for rule, _ in hits(text)] == ["TD013"]
