"""TD007: loss tensors accumulated across iterations."""

import pytest
from lint_helpers import code, findings, fixed, hits

BASE = """
import torch.nn as nn
crit = nn.CrossEntropyLoss()
total = 0.0
for x, y in loader:
    loss = crit(model(x), y)
    loss.backward()
    {line}
"""


@pytest.mark.parametrize("line", ["total += loss", "total = total + loss", "total += loss * x.size(0)",
                                  "total += crit(model(x), y)"])
def test_tensor_accumulation_is_reported(line):
    assert hits(BASE.format(line=line)) == [("TD007", 7)]


@pytest.mark.parametrize("line", ["total += loss.item()", "total += loss.detach()", "total += float(loss)",
                                  "total += loss.item() * x.size(0)", "total += x.sum()"])
def test_number_accumulation_is_fine(line):
    assert hits(BASE.format(line=line)) == []


def test_list_of_losses_is_reported_with_item_fix():
    text = BASE.replace("total = 0.0", "losses = []").format(line="losses.append(loss)")
    assert hits(text) == [("TD007", 7)]
    assert fixed(text, "TD007").splitlines()[6].strip() == "losses.append(loss.item())"


def test_fix_uses_detach_when_the_total_is_used_as_a_tensor():
    text = BASE.format(line="total += loss") + "print(total.item())\n"
    assert fixed(text, "TD007").splitlines()[6].strip() == "total += loss.detach()"


def test_summing_losses_for_one_backward_is_fine():
    text = code("""
        import torch.nn.functional as F
        for x, y in loader:
            total = 0
            for head in heads:
                total += F.cross_entropy(head(x), y)
            total.backward()
    """)
    assert hits(text) == []


def test_accumulator_reset_inside_the_loop_is_fine():
    text = code("""
        import torch.nn.functional as F
        for x, y in loader:
            running = 0
            running += F.mse_loss(model(x), y)
            log(running)
    """)
    assert hits(text) == []


def test_accumulating_under_no_grad_is_fine():
    text = code("""
        import torch
        import torch.nn.functional as F
        total = 0
        with torch.no_grad():
            for x, y in val_loader:
                total += F.mse_loss(model(x), y)
    """)
    assert hits(text, "TD007") == []


def test_message_names_both_variables():
    (finding,) = findings(BASE.format(line="total += loss"))
    assert "`total`" in finding.message and "`loss`" in finding.message
