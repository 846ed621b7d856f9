"""Which operation made a non-finite loss: the walk of its graph before backward."""

from __future__ import annotations

import torch

from torchdoctor.runtime.anomaly.loss_forensics import describe, find_origin


def test_log_of_zero_in_a_hand_written_bce():
    logits = torch.tensor([30.0, -2.0, 40.0, 1.0], requires_grad=True)
    p = torch.sigmoid(logits)
    y = torch.tensor([1.0, 0.0, 1.0, 0.0])
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    assert torch.isnan(loss)
    origin = find_origin(loss)
    assert origin["op"] == "log" and origin["node"] == "LogBackward0" and origin["detail"] == "of 2 zeros"
    assert describe(origin) == "`log` of 2 zeros (LogBackward0)"


def test_division_by_a_zero_std():
    x = torch.randn(8, 3, requires_grad=True)
    z = x * torch.tensor([1.0, 0.0, 1.0])
    loss = ((z - z.mean(0)) / z.std(0)).pow(2).sum()
    origin = find_origin(loss)
    assert origin["op"] == "division" and origin["detail"] == "by 1 zeros"


def test_log_of_negative_values_and_sqrt():
    x = torch.tensor([-1.0, 2.0], requires_grad=True)
    assert find_origin(torch.log(x).sum())["detail"] == "of 1 negative values"
    assert find_origin(torch.sqrt(x).sum())["op"] == "sqrt"


def test_the_deepest_maker_wins_and_bad_operands_are_not_blamed():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    bad = torch.log(x)  # -inf: the origin
    loss = (torch.log(bad.abs() + 1) / (x + 1)).sum()  # a later log sees an Inf operand: not the origin
    origin = find_origin(loss)
    assert origin["op"] == "log" and origin["detail"] == "of 1 zeros" and origin["depth"] >= 3


def test_nothing_to_blame():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert find_origin((x * 2).sum()) is None
    assert find_origin(torch.tensor(float("nan"))) is None
    assert describe(None) is None


def test_after_backward_the_saved_tensors_are_gone_and_that_is_fine():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    loss = torch.log(x + 0).sum()
    loss.backward()
    assert find_origin(loss) is None
