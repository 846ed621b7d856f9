"""Conditional-breakpoint helpers: right answers, cheap repeats, and False instead of raising."""

from __future__ import annotations

import importlib

import torch
from torch import nn

tdc = importlib.import_module("torchdoctor.runtime.anomaly.conditions")
CONDITION = "__import__('torchdoctor.runtime.anomaly.conditions', fromlist=['_']).{}"


def test_any_nonfinite_reads_the_callers_locals():
    def line(x):
        y = [torch.ones(2), {"h": x}]  # noqa: F841 (read by the helper through the frame)
        return tdc.any_nonfinite()

    assert line(torch.ones(3)) is False
    assert line(torch.tensor([1.0, float("inf")])) is True
    assert tdc.any_nonfinite({"a": torch.ones(2), "n": 3}) is False


def test_any_nonfinite_as_a_condition_string_evaluated_like_pydevd():
    frame_locals = {"logits": torch.tensor([0.0, float("nan")]), "step": 3}
    assert eval(CONDITION.format("any_nonfinite()"), {}, frame_locals) is True
    frame_locals["logits"] = torch.zeros(2)
    assert eval(CONDITION.format("any_nonfinite()"), {}, frame_locals) is False


def test_any_nonfinite_remembers_unchanged_tensors_and_sees_in_place_changes():
    t = torch.ones(4)
    assert tdc.any_nonfinite({"t": t}) is False
    assert id(t) in tdc._seen
    t[1] = float("nan")  # new version: read again
    assert tdc.any_nonfinite({"t": t}) is True
    assert tdc.any_nonfinite({"t": t}) is True  # answered from memory


def test_exceeds():
    assert tdc.exceeds(150.0, 100) and not tdc.exceeds(-99, 100)
    assert tdc.exceeds(float("nan"), 100)
    assert tdc.exceeds(torch.tensor([1.0, -250.0]), 100) and not tdc.exceeds(torch.tensor([1.0, 2.0]), 100)
    assert tdc.exceeds(torch.tensor(float("inf")), 1e30)
    assert tdc.exceeds(torch.tensor([5, 500]), 100)  # integer tensors too


def test_loss_spiked_per_line():
    def hit(value):
        return tdc.loss_spiked(torch.tensor(value), 10)  # one line: one history

    assert [hit(v) for v in [1.0, 1.2, 0.9, 1.1, 1.0]] == [False] * 5
    assert hit(50.0) is True
    assert hit(float("nan")) is True
    assert tdc.loss_spiked(50.0, 10) is False  # another line: no history yet


def test_grad_norm_exceeds():
    model = nn.Linear(3, 1)
    assert tdc.grad_norm_exceeds(model, 1.0) is False  # no gradients yet
    (model(torch.ones(2, 3)) * 100).sum().backward()
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()])).item()
    assert tdc.grad_norm_exceeds(model, total * 0.9) and not tdc.grad_norm_exceeds(model, total * 1.1)
    before = [p.grad.clone() for p in model.parameters()]
    tdc.grad_norm_exceeds(model, 0.0)
    assert all(torch.equal(b, p.grad) for b, p in zip(before, model.parameters()))
    model.bias.grad[0] = float("nan")
    assert tdc.grad_norm_exceeds(model, 1e30)


def test_never_raise():
    assert tdc.exceeds("text", 1) is False and "exceeds" in tdc.last_error()
    assert tdc.loss_spiked(object()) is False and "loss_spiked" in tdc.last_error()
    assert tdc.grad_norm_exceeds(None, 1) is False and "grad_norm_exceeds" in tdc.last_error()
    assert tdc.any_nonfinite(42) is False and "any_nonfinite" in tdc.last_error()
