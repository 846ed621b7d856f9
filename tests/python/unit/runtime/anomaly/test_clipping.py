"""Gradient clipping done by the script: gradients are judged after it, and clipping is never
advised to a script that clips."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.clip_grad import clip_grad_value_

from support.anomaly import watching


def regression(seed: int = 0):
    """Targets in the thousands and a summed squared error: raw gradients far past 1e4."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    weights = torch.randn(8, 1) * 1000
    g = torch.Generator().manual_seed(seed)
    batches = [torch.randn(32, 8, generator=g) for _ in range(8)]
    return model, [(x, x @ weights) for x in batches]


def fit(model, batches, clip=None, nan_at=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    norms = []
    for step, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).sum()
        if step == nan_at:
            loss = loss + (model[0].bias - model[0].bias.detach()).abs().sqrt().sum()
        loss.backward()  # clipping backward line
        if clip is not None:
            norms.append(clip(model))  # clipping call line
        optimizer.step()  # clipping step line
    return norms


def by_norm(model):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)


def by_value(model):
    return clip_grad_value_(model.parameters(), clip_value=1.0)


def test_huge_raw_norms_clipped_by_the_script_are_silent():
    for clip in (by_norm, by_value):
        model, batches = regression()
        with watching() as seen:
            norms = fit(model, batches, clip)
        assert seen.reports == [] and seen.watch.errors == [], clip
    assert float(norms[0]) > 1e4 if norms[0] is not None else True


def test_without_clipping_the_same_gradients_are_reported_with_the_advice():
    model, batches = regression()
    with watching() as seen:
        fit(model, batches)
    [report] = seen.reports
    assert (
        report["kind"] == "exploding_grad"
        and report["step"] == 0
        and report["where"].endswith(f"test_clipping.py:{_line('# clipping backward line')}")
    )
    assert not report.get("clipping")


def test_gradients_still_past_the_threshold_after_clipping_are_reported_at_the_clip_without_advice():
    model, batches = regression()
    with watching() as seen:
        fit(model, batches, lambda m: torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=1e9))  # clip lambda
    [report] = seen.reports
    assert report["kind"] == "exploding_grad" and report["step"] == 0
    assert report["clipped_by"] == "clip_grad_norm_" and report["clipping"] is True
    assert report["where"].endswith(f"test_clipping.py:{_line('# clip lambda')}")  # the user's call of it
    assert "clip them" not in report["sentence"] and "after the script's `clip_grad_norm_`" in report["sentence"]


def test_a_script_that_names_clipping_but_skips_it_is_reported_at_the_optimizer_step():
    model, batches = regression()
    with watching() as seen:
        fit(model, batches, lambda m: None if True else torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0))
    [report] = seen.reports
    assert report["kind"] == "exploding_grad" and report["step"] == 0 and report["clipping"] is True
    assert report["where"].endswith(f"test_clipping.py:{_line('# clipping step line')}")


def test_non_finite_gradients_are_never_held_back_for_clipping():
    model, batches = regression()
    with watching() as seen:
        fit(model, batches, by_norm, nan_at=2)
    [report] = seen.reports
    assert report["kind"] == "nonfinite_grad" and report["step"] == 2
    assert report["where"].endswith(f"test_clipping.py:{_line('# clipping backward line')}")


def _line(marker: str) -> int:
    for number, text in enumerate(open(__file__, encoding="utf-8"), 1):
        if marker in text and "_line(" not in text:
            return number
    raise AssertionError(marker)
