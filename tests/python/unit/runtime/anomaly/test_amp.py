"""Mixed precision under the watch: a GradScaler's scaling, skips and back-off are its job.

float16 autocast runs on the CPU with torch 2.13; bfloat16 needs no scaler. What is an anomaly
is a scaler that keeps skipping: many steps in a row, or a scale that collapsed.
"""

from __future__ import annotations

import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly import amp


def classifier(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 4))


def amp_run(model, steps: int, scaler, dtype=torch.float16, poison_grad: bool = False):
    """A float16 (or bfloat16) autocast loop; ``poison_grad`` adds a term whose gradient is NaN
    (the derivative of sqrt(|0|)) to every loss: finite forward, non-finite backward."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x = torch.randn(32, 16, generator=g)
        y = (x[:, :2].sum(dim=1) > 0).long() + 2 * (x[:, 2] > 0).long()
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=dtype):
            loss = nn.functional.cross_entropy(model(x), y)
        if poison_grad:
            bias = model[0].bias
            loss = loss + (bias - bias.detach()).abs().sqrt().sum()
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()  # scaler update line
        losses.append(loss.item())
    return losses


def test_scaled_gradients_are_judged_unscaled_and_the_loss_shown_is_unscaled():
    """At the default scale 65536 the scaled gradients are far past the threshold 1e4."""
    model = classifier()
    scaler = torch.amp.GradScaler("cpu")
    with watching() as seen:
        losses = amp_run(model, 30, scaler)
        last = seen.watch._last_loss
    assert seen.reports == [] and seen.watch.errors == []
    assert abs(last - losses[-1]) <= 1e-3 * abs(losses[-1])  # not 65536 times it


def test_a_large_initial_scale_backing_off_for_several_steps_is_silent():
    model = classifier()
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**24, growth_interval=10)
    with watching() as seen:
        amp_run(model, 60, scaler)
        run = seen.watch.amp._runs[id(scaler)][1]
    assert seen.reports == [] and seen.watch.errors == []
    assert run.total >= 3 and scaler.get_scale() < 2.0**24  # it did back off, several times


def test_bfloat16_autocast_is_silent():
    with watching() as seen:
        amp_run(classifier(), 30, None, dtype=torch.bfloat16)
    assert seen.reports == [] and seen.watch.errors == []


def test_a_scaler_whose_scale_collapses_is_reported_in_words():
    """Gradients that are NaN whatever the scale: the scaler backs off 8, 4, 2, 1 and stops there."""
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0)
    with watching() as seen:
        amp_run(classifier(), 6, scaler, poison_grad=True)
    [report] = seen.reports
    assert report["kind"] == "scaler_skips" and report["collapsed"] is True
    assert (report["skipped"], report["since"], report["step"]) == (4, 0, 3)
    assert (report["scale_before"], report["last_scale"], report["scale_now"]) == (8.0, 1.0, 0.5)
    assert report["where"].endswith(f"test_amp.py:{_line('# scaler update line')}")
    assert report["sentence"].startswith("The GradScaler `scaler` skipped 4 optimizer steps in a row (steps 0-3)")
    assert [r["kind"] for r in seen.breaks] == ["scaler_skips"]


def test_a_scaler_skipping_many_steps_in_a_row_is_reported():
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**60)
    with watching() as seen:
        amp_run(classifier(), amp.MAX_SKIP_RUN + 2, scaler, poison_grad=True)
    [report] = seen.reports
    assert report["kind"] == "scaler_skips" and report["collapsed"] is False
    assert report["skipped"] == amp.MAX_SKIP_RUN and report["step"] == amp.MAX_SKIP_RUN - 1


def test_an_unscaled_gradient_past_the_threshold_is_still_reported_unscaled():
    model = classifier()
    scaler = torch.amp.GradScaler("cpu")
    with watching(threshold=1e-3, checks=["backward"]) as seen:  # every real gradient is past this one
        amp_run(model, 2, scaler)
    [report] = seen.reports
    assert report["kind"] == "exploding_grad" and report["step"] == 0 and report["grad_scale"] == 65536.0
    assert report["max_abs"] < 10  # the gradient the optimizer sees, not 65536 times it
    assert "(unscaled: the GradScaler's scale 65536 divided out)" in report["sentence"]


def test_the_watch_changes_nothing_the_scaler_computes():
    def run(watched: bool):
        model, scaler = classifier(), torch.amp.GradScaler("cpu", init_scale=2.0**20, growth_interval=5)
        if watched:
            with watching():
                losses = amp_run(model, 20, scaler)
        else:
            losses = amp_run(model, 20, scaler)
        return losses, scaler.get_scale(), [p.detach().clone() for p in model.parameters()]

    (l1, s1, p1), (l2, s2, p2) = run(False), run(True)
    assert l1 == l2 and s1 == s2 and all(torch.equal(a, b) for a, b in zip(p1, p2))


def test_uninstall_restores_the_scaler_and_the_clipping_functions():
    originals = (
        torch.amp.GradScaler.scale,
        torch.amp.GradScaler.update,
        torch.amp.GradScaler.unscale_,
        torch.nn.utils.clip_grad_norm_,
        torch.nn.utils.clip_grad.clip_grad_value_,
    )
    with watching():
        assert torch.amp.GradScaler.scale is not originals[0]
        assert torch.nn.utils.clip_grad_norm_ is not originals[3]
    assert (
        torch.amp.GradScaler.scale,
        torch.amp.GradScaler.update,
        torch.amp.GradScaler.unscale_,
        torch.nn.utils.clip_grad_norm_,
        torch.nn.utils.clip_grad.clip_grad_value_,
    ) == originals


def _line(marker: str) -> int:
    for number, text in enumerate(open(__file__, encoding="utf-8"), 1):
        if marker in text and "_line(" not in text:
            return number
    raise AssertionError(marker)
