"""Which operation made a non-finite loss: the walk of its graph before backward."""

from __future__ import annotations

import torch

from torchdoctor.runtime.anomaly.loss_forensics import _walk, describe, find_origin


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
    assert origin["op"] == "division" and origin["detail"].startswith("by 1 zeros (a standard deviation of 0")


def test_a_zero_divisor_says_when_it_is_a_spread_with_no_eps():
    """``x / (std + eps)`` with eps=0 on a constant input (vq-vae-2-style normalising code): the
    detail says the divisor is a spread of 0 and no eps keeps it above 0, through ``+ eps``, a
    square root of a variance, a clamp; a plain zero divisor stays plain."""
    w = torch.ones(4, 6, requires_grad=True)
    flat = w * 0  # constant rows
    divisors = {
        "standard deviation": flat.std(1, keepdim=True) + 0.0,
        "variance": (flat.var(1, keepdim=True) + 0.0).sqrt(),
        "norm": flat.norm(dim=1, keepdim=True).clamp(min=0.0),
    }
    for measure, divisor in divisors.items():
        origin = find_origin(((flat - flat.mean(1, keepdim=True)) / divisor).sum())
        assert origin["op"] == "division" and origin["detail"].startswith("by 4 zeros"), measure
        assert f"(a {measure} of 0: the input it measures is constant there, and no eps" in origin["detail"]
    plain = find_origin((torch.ones(3, requires_grad=True) / (w[0, :3] * torch.tensor([1.0, 0.0, 1.0]))).sum())
    assert plain["op"] == "division" and plain["detail"] == "by 1 zeros"


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


def test_every_node_of_a_wide_graph_is_walked():
    """``next_functions`` makes a new Python object for a node whose last one was freed, and a freed
    object's id is reused: a walk that kept only ids skipped nodes (302 of 903 here on Python 3.9 with
    torch 2.8, where a hand-written BCE's `log` went unnamed)."""
    x = torch.ones(3, requires_grad=True)
    loss = torch.stack([torch.log(x * (i + 1)).sum() for i in range(300)]).sum()
    walked = sum(1 for _ in _walk(loss.grad_fn))  # first: the reference below keeps every node alive
    kept, stack = {}, [loss.grad_fn]
    while stack:  # the reference: every node object kept alive while walking
        node = stack.pop()
        if node is not None and id(node) not in kept:
            kept[id(node)] = node
            stack.extend(child for child, _ in node.next_functions)
    assert walked == len(kept) == 903
