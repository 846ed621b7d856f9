"""LR finder (Smith 2017, "Cyclical Learning Rates for Training Neural Networks").

Sweep the learning rate exponentially from 1e-7 to 10, one optimizer step per
value, on the example batch; record the loss and an exponentially smoothed loss
(beta 0.98, bias-corrected). Stop when the smoothed loss exceeds 4x the best one
or the loss is NaN/Inf. Two suggestions, both reported:

- steepest descent: the lr where the loss falls fastest per decade, before its minimum, read on a
  centred moving average of the losses (:func:`centred`: the online average lags by half a sweep),
  skipping the first tenth of the sweep (as torch_lr_finder's ``skip_start=10`` of 100 and fastai
  do): there the bias-corrected average still leans on a handful of points, and a step of noise
  reads as the steepest fall (1.2e-7, the second point, on a small CNN);
- "10x below the minimum": the lr of the smallest loss on that centred curve, divided by 10 (seed 002).

Bounded: when ``timeBudgetSeconds`` (default 60) cannot hold ``num_iter`` steps at the measured
cost of one, the rest of the sweep is re-spaced over the steps that fit, so the curve still
reaches ``end_lr`` with fewer points (and says so) instead of being killed at the time limit.

``lr_find`` restores the model's parameters and buffers, its train/eval modes,
the gradients, the optimizer's state (moments and lr) and torch's CPU RNG, so a
user can call it on the objects they are about to train with.
"""

from __future__ import annotations

import copy
import csv
import math
import time
from dataclasses import dataclass, field
from typing import Callable

from ..spelling import fmt_num
from . import result as R

START_LR = 1e-7
END_LR = 10.0
NUM_ITER = 100
BETA = 0.98
DIVERGE = 4.0
MIN_POINTS = 10
SKIP_START = 0.1  # of the sweep's points, left out of the steepest-descent search
CENTRED_SHARE = 0.03  # half-width of the centred average the suggestions are read on, in sweep points
TIME_BUDGET = 60.0


@dataclass
class Sweep:
    lrs: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    smoothed: list = field(default_factory=list)
    stopped: str = "end of sweep"  # or "diverged" / "nan"
    respaced_at: int | None = None  # the step from which the lr was re-spaced to fit the time budget
    planned: int = 0  # the points the sweep was planned with


def lr_find(
    model,
    optimizer,
    step_loss: Callable[[], "object"],
    *,
    start_lr: float = START_LR,
    end_lr: float = END_LR,
    num_iter: int = NUM_ITER,
    beta: float = BETA,
    diverge: float = DIVERGE,
    report: Callable[[float, str], None] | None = None,
    time_budget: float | None = None,
) -> Sweep:
    """Run the sweep; ``step_loss()`` runs one forward and returns the loss tensor.
    Everything the sweep touches is put back afterwards, even when it raises."""
    import torch

    saved = _save(model, optimizer)
    try:
        with torch.random.fork_rng(devices=_cuda_devices(model)):
            return _sweep(model, optimizer, step_loss, start_lr, end_lr, num_iter, beta, diverge, report, time_budget)
    finally:
        _restore(model, optimizer, saved)


def _cuda_devices(model) -> list:
    return sorted({p.device.index or 0 for p in model.parameters() if p.device.type == "cuda"})


def _save(model, optimizer) -> dict:
    return {
        "model": copy.deepcopy(model.state_dict()),
        "optimizer": copy.deepcopy(optimizer.state_dict()),
        "modes": {name: m.training for name, m in model.named_modules()},
        "grads": [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()],
    }


def _restore(model, optimizer, saved: dict) -> None:
    import torch

    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    for name, m in model.named_modules():
        m.training = saved["modes"].get(name, m.training)
    with torch.no_grad():
        for p, g in zip(model.parameters(), saved["grads"]):
            p.grad = None if g is None else g.clone()


def _sweep(model, optimizer, step_loss, start_lr, end_lr, num_iter, beta, diverge, report, time_budget) -> Sweep:
    sweep = Sweep(planned=num_iter)
    model.train()
    avg, best = 0.0, math.inf
    started = first_done = time.monotonic()
    lr, ratio = start_lr, (end_lr / start_lr) ** (1 / max(num_iter - 1, 1))
    for i in range(num_iter):
        if i:
            lr *= ratio
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        loss = step_loss()
        value = float(loss.detach())
        if not math.isfinite(value):
            sweep.stopped = "nan"
            break
        avg = beta * avg + (1 - beta) * value
        smooth = avg / (1 - beta ** (i + 1))
        sweep.lrs.append(lr)
        sweep.losses.append(value)
        sweep.smoothed.append(smooth)
        if smooth > diverge * best:
            sweep.stopped = "diverged"
            break
        best = min(best, smooth)
        backward(loss)
        optimizer.step()
        if report and i % 5 == 0:
            report(i / num_iter, f"lr {fmt_num(lr, 2)}: loss {fmt_num(value, 4)}")
        if i == 0:
            first_done = time.monotonic()  # the first step pays for warm-up: not a step's cost
        if lr >= end_lr * (1 - 1e-9):
            break
        if time_budget is not None and i >= 2:
            ratio = _respace(sweep, i, num_iter, lr, end_lr, time.monotonic(), started, first_done, time_budget)
    return sweep


def _respace(sweep: Sweep, i: int, num_iter: int, lr: float, end_lr: float, now, started, first_done, budget):
    """The lr ratio per step that reaches ``end_lr`` in the steps left, or in fewer when one step
    costs too much for the time budget (the sweep keeps at least 2 x :data:`MIN_POINTS` points)."""
    per_step = (now - first_done) / i
    left = num_iter - 1 - i
    fits = int(max(budget - (now - started), 0.0) / per_step) if per_step > 0 else left
    steps = max(1, min(left, max(fits, 2 * MIN_POINTS - (i + 1))))
    if steps < left and sweep.respaced_at is None:
        sweep.respaced_at = i + 1
    return (end_lr / lr) ** (1 / steps)


def backward(loss) -> None:
    """``loss.backward()``; a RuntimeError is said in words (a freed graph, an in-place change, a cut)."""
    from .preconditions import explain_backward_error

    try:
        loss.backward()
    except RuntimeError as exc:
        raise SweepError(explain_backward_error(str(exc))) from None


class SweepError(RuntimeError):
    """The sweep could not go on for a reason in the user's code, said in words."""


def suggestions(sweep: Sweep) -> dict:
    """Both suggestions (None when the sweep is too short to say)."""
    if len(sweep.smoothed) < MIN_POINTS:
        return {"steepest": None, "minimum": None, "minimumDiv10": None}
    s = centred(sweep.losses if len(sweep.losses) == len(sweep.smoothed) else sweep.smoothed)
    i_min = min(range(len(s)), key=lambda i: s[i])
    logs = [math.log10(lr) for lr in sweep.lrs]
    skip = max(1, round(SKIP_START * max(sweep.planned, len(s))))
    # central differences of the smoothed loss per decade of lr, after the start, up to the minimum
    window = range(skip, i_min)
    slopes = {i: (s[i + 1] - s[i - 1]) / (logs[i + 1] - logs[i - 1]) for i in window if i + 1 < len(s)}
    i_steep = min(slopes, key=lambda i: slopes[i]) if slopes and min(slopes.values()) < 0 else None
    return {
        "steepest": sweep.lrs[i_steep] if i_steep is not None else None,
        "minimum": sweep.lrs[i_min],
        "minimumDiv10": sweep.lrs[i_min] / 10,
    }


def centred(losses: list) -> list:
    """The losses smoothed without lag: a moving average centred on each point, over 3% of the points
    on each side (3 of 100, about a quarter of a decade), narrower at the ends. The online average
    above (beta 0.98) lags by about beta / (1 - beta) = 49 points, half a sweep of 100: its fastest
    fall comes decades after the loss's own (0.14 instead of about 1e-3 on a DCGAN generator);
    torch_lr_finder's 0.95 lags 19 points. The suggestions are read on this curve; the online one
    only decides when to stop."""
    h = max(2, round(CENTRED_SHARE * len(losses)))
    out = []
    for i in range(len(losses)):
        k = min(h, i, len(losses) - 1 - i)  # symmetric at the ends too: no lag there either
        window = losses[i - k : i + k + 1]
        out.append(sum(window) / len(window))
    return out


def write_csv(sweep: Sweep, path: str) -> None:
    """step, lr, loss, smoothed_loss: one row per step of the sweep (seed 002's exercise 3)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["step", "lr", "loss", "smoothed_loss"])
        for i, (lr, loss, smooth) in enumerate(zip(sweep.lrs, sweep.losses, sweep.smoothed)):
            w.writerow([i, f"{lr:.6e}", f"{loss:.8g}", f"{smooth:.8g}"])


def make_optimizer(name: str, params):
    import torch

    if name.lower() == "sgd":
        return torch.optim.SGD(params, lr=START_LR, momentum=0.9)
    return torch.optim.Adam(params, lr=START_LR)


def run(ex, options: dict, report: Callable[[float, str], None], result: dict) -> dict:
    from .preconditions import has_trainable_parameters, nothing_to_train

    if not has_trainable_parameters(ex.model):
        return nothing_to_train(ex.model, result, "no optimizer to sweep the learning rate of")
    opt_name = str(options.get("optimizer", "adam"))
    optimizer = make_optimizer(opt_name, [p for p in ex.model.parameters() if p.requires_grad])
    try:
        sweep = lr_find(
            ex.model,
            optimizer,
            lambda: ex.loss(ex.output()),
            start_lr=float(options.get("startLr", START_LR)),
            end_lr=float(options.get("endLr", END_LR)),
            num_iter=int(options.get("numIter", NUM_ITER)),
            report=report,
            time_budget=float(options.get("timeBudgetSeconds", TIME_BUDGET)),
        )
    except SweepError as exc:
        result["verdict"] = R.FAIL
        result["headline"] = "loss.backward() failed during the sweep: the model cannot train as written."
        result["sentences"] = [str(exc), "The model's weights and the optimizer's state were restored."]
        return result
    sug = suggestions(sweep)
    if options.get("csv"):
        write_csv(sweep, str(options["csv"]))
    result["curve"] = _curve(sweep, sug)
    result["details"] = {
        "optimizer": "SGD (momentum 0.9)" if opt_name.lower() == "sgd" else "Adam",
        "points": len(sweep.lrs),
        "stopped": sweep.stopped,
        "suggestedLr": sug["steepest"],
        "minimumLr": sug["minimum"],
        "minimumDiv10Lr": sug["minimumDiv10"],
        "csv": options.get("csv"),
        "stateRestored": True,
        "plannedPoints": sweep.planned,
        "respacedAt": sweep.respaced_at,
    }
    _verdict(sweep, sug, result)
    return result


def _curve(sweep: Sweep, sug: dict) -> dict:
    marks = []
    if sug["steepest"] is not None:
        marks.append({"x": sug["steepest"], "label": f"steepest {fmt_num(sug['steepest'], 2)}"})
    if sug["minimumDiv10"] is not None:
        marks.append({"x": sug["minimumDiv10"], "label": f"min/10 {fmt_num(sug['minimumDiv10'], 2)}"})
    return {
        "xLabel": "learning rate",
        "yLabel": "loss",
        "xScale": "log",
        "series": [
            {"name": "loss", "points": [[lr, v] for lr, v in zip(sweep.lrs, sweep.losses)]},
            {"name": "smoothed", "points": [[lr, v] for lr, v in zip(sweep.lrs, sweep.smoothed)]},
        ],
        "marks": marks,
    }


def _verdict(sweep: Sweep, sug: dict, result: dict) -> None:
    end = {
        "diverged": "the smoothed loss passed 4x its best",
        "nan": "the loss became NaN/Inf",
        "end of sweep": "the sweep reached its end",
    }[sweep.stopped]
    last_lr = fmt_num(sweep.lrs[-1], 2) if sweep.lrs else "the first step"
    if sug["minimum"] is None:
        result["verdict"] = R.WARN
        result["headline"] = (
            f"The loss diverged after {len(sweep.lrs)} steps (at lr {last_lr}): too few points to suggest a learning rate."
        )
        result["sentences"] = [
            "Run the Overfit test first: a loss that explodes at tiny learning rates points to a broken loss or numerics."
        ]
        return
    if sug["steepest"] is None:
        result["verdict"] = R.WARN
        result["headline"] = f"The loss never fell during the sweep (1e-7 to {last_lr}); {end}."
        result["sentences"] = [
            f"Lowest smoothed loss at lr {fmt_num(sug['minimum'], 2)}; 10x below it: {fmt_num(sug['minimumDiv10'], 2)}.",
            "A loss that does not fall at any learning rate points to a bug, not a tuning problem: run the Overfit test.",
        ]
        return
    result["verdict"] = R.PASS
    result["headline"] = (
        f"Suggested learning rate: {fmt_num(sug['steepest'], 2)} (steepest descent) or {fmt_num(sug['minimumDiv10'], 2)} (10x below the minimum)."
    )
    result["sentences"] = [
        f"The loss (a centred moving average) falls fastest at lr {fmt_num(sug['steepest'], 2)} and is lowest at {fmt_num(sug['minimum'], 2)}; the sweep stopped at {last_lr} because {end}.",
        "Smith (2017): pick a rate about 10x below where the loss is lowest, or where it falls fastest; the two usually agree within a factor of a few.",
    ]
    if sweep.stopped == "end of sweep" and sug["minimum"] == sweep.lrs[-1]:
        result["sentences"].append(
            f"The loss was still falling at the end of the sweep ({last_lr}): one small batch is easy to memorise even at large "
            "learning rates, so the minimum is not a real one and the steepest-descent suggestion is the one to use."
        )
    if sweep.respaced_at is not None:
        result["sentences"].append(
            f"One step took too long for {sweep.planned} steps in the time budget: from step {sweep.respaced_at} on, the "
            f"learning rate grew faster, so the sweep has {len(sweep.lrs)} points (option timeBudgetSeconds)."
        )
    result["sentences"].append(
        "The sweep ran on the example batch; the model's weights and the optimizer's state were restored afterwards."
    )
