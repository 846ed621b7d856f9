"""A model's line at one stop (issue 15: a model with 2,000 parameter tensors, second hover
<= 1.1x a cache hit): the second summary under the stop's epoch does no per-parameter work, and
a new epoch (the next stop, or a line run from the debug console) sees every kind of change.

Work is counted, not timed: every Python and C call the second summary makes (``sys.setprofile``),
for a model of 20 and of 2,000 parameter tensors. The epochs here are made by hand as the
debugger plugin makes them (one object per stop, renewed by the REPL); the same contract through
a real debugpy is ``tests/python/dap/test_dap_model_line.py``.
"""

from __future__ import annotations

import sys
from typing import Callable, Dict

import pytest
import torch

from support.summaries import cold_summaries
from torchdoctor.runtime.stats import budget
from torchdoctor.runtime.summary import aggregates
from torchdoctor.runtime.summary.api import summarize


@pytest.fixture(autouse=True)
def cold():
    with cold_summaries():
        yield


def trained(layers: int) -> torch.nn.Sequential:
    """``layers`` Linear(4, 4) (two parameter tensors each) with gradients set, as at a stop."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(layers)])
    model(torch.randn(2, 4)).sum().backward()
    return model


def hover(model, epoch) -> str:
    """A hover's summary: a budget as the plugin opens one (150 ms, the whole share for a walk)."""
    with budget.activate(budget.Budget(0.15, epoch, 1.0)):
        return summarize(model)


def calls_of(action: Callable[..., object], *args: object) -> Dict[str, int]:
    """How many Python function calls and C calls ``action(*args)`` makes (profiler events)."""
    counts = {"call": 0, "c_call": 0}

    def profile(frame, event, arg):
        if event in counts:
            counts[event] += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        action(*args)
    finally:
        sys.setprofile(previous)
    return counts


def settled(model, epoch) -> str:
    """Hover until the line is complete (a loaded machine may need more than one walk)."""
    for _ in range(100):
        line = hover(model, epoch)
        if "stats…" not in line:
            return line
    raise AssertionError(line)


@pytest.mark.parametrize("poisoned", [False, True], ids=["healthy", "every tensor NaN"])
def test_the_second_hover_at_one_stop_makes_the_same_calls_for_20_and_2000_parameters(poisoned):
    # Poisoned: every parameter and gradient NaN, as after an optimizer step with a NaN loss; the
    # line names three of them. Copying all the names for each hover was per-parameter work.
    first, second = {}, {}
    for layers in (10, 1000):
        model, epoch = trained(layers), object()
        if poisoned:
            poison_by_a_step(model)
        aggregates.MODULE_LINES.clear()
        first[layers] = calls_of(hover, model, object())  # a cold walk: per-parameter work
        settled(model, epoch)
        line = hover(model, epoch)
        second[layers] = calls_of(hover, model, epoch)
        assert hover(model, epoch) == line
    # The control: a walk of the model does work per parameter, and the profiler sees it.
    assert first[1000]["call"] > 10 * first[10]["call"], first
    # The second hover is a look-up of the line: its calls do not depend on the model's size.
    assert second[1000] == second[10], second
    assert second[1000]["call"] < first[10]["call"], (first, second)


def poison_by_a_step(model):
    model(torch.randn(2, 4)).sum().backward()
    torch.optim.SGD(model.parameters(), lr=float("nan")).step()


def edit_in_place(model):
    with torch.no_grad():
        model[3].weight[0, 0] = float("inf")


def add_parameter(model):
    model.register_parameter("extra", torch.nn.Parameter(torch.zeros(10_000)))


def replace_parameter(model):
    model[2].weight = torch.nn.Parameter(torch.full((4, 4), float("nan")))


def freeze(model):
    model.requires_grad_(False)


CHANGES = {
    "an optimizer step": (poison_by_a_step, "⚠ NaN/Inf in 0.weight"),
    "an in-place edit": (edit_in_place, "⚠ NaN/Inf in 3.weight"),
    "a .to()": (lambda model: model.to(torch.float64), " f64 "),
    "a parameter added": (add_parameter, "12K params"),
    "a parameter replaced": (replace_parameter, "⚠ NaN/Inf in 2.weight"),
    "eval()": (lambda model: model.eval(), " eval"),
    "requires_grad_(False)": (freeze, "(2K frozen)"),
    "a NaN gradient": (lambda model: model[4].bias.grad.fill_(float("nan")), "NaN/Inf in grad of 4.bias"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_between_stops_is_seen_at_the_next_stop(change):
    model = trained(100)
    stop = object()
    before = settled(model, stop)
    assert hover(model, stop) == before and "⚠" not in before and " f64 " not in before
    apply, expected = CHANGES[change]
    apply(model)
    after = settled(model, object())  # the next stop (or a line run in the debug console)
    assert expected in after and after != before, (before, after)
