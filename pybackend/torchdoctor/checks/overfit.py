"""Overfit one batch (seed 002's "most important debugging technique").

Train the model on one small batch (8 samples by default) with Adam, lr 1e-3,
for up to 200 steps. A healthy model and training loop memorise it: the loss
falls near zero and, for classification, accuracy reaches 100%. If not, the
model or the loop has a fundamental bug; the result says which of the seed's
causes the evidence points to (broken loss, optimizer not connected to the
parameters, data and labels misaligned, model too small).

Dropout is off during the test and the result says so (``regularisation.py``): it exists to
prevent memorising. The loss is the example's: ours, the user's, or the model's own
(``example/core.py``). Accuracy is per sample for ``(B, C)`` and per token for ``(B, T, V)``.

PASS criterion, "near zero" made measurable (the run stops as soon as it holds):
- classification (integer class targets): accuracy 100% and loss <= max(0.1, 10% of the
  first step's loss); 0.1 is the seed's threshold, the 10% keeps it fair to many classes;
- anything else (MSE, custom losses on float targets): the loss above its floor (the loss of a
  perfect prediction, >0 for soft targets: BCE(x, x)) <= max(1e-3, 10% of the first step's).
A model ending in a softmax reaches 100% accuracy but not this loss: that is the point.

Slow learners: when the loss (above its floor) still fell by a tenth over the last quarter of the
run, training goes on, doubling the steps (200 -> 400 -> 800 -> 1000, ``EXTEND`` times the option
``steps``) as long as it keeps falling and the next stretch fits ``timeBudgetSeconds`` at the pace
measured so far. A run that still falls when the limit or the budget stops it is a WARN that says
which stopped it and how many more steps the pace of its last quarter asks for, never a FAIL.

Bounded: every step checks the clock, and training stops once ``timeBudgetSeconds`` has passed
(the editor and the CLI give a share of the time limit: ``jobs.give_budget``), keeping the curve so
far. A batch memorised by then is judged as usual; otherwise, when the budget stopped the first
``steps``, the verdict is a WARN saying after how many of how many steps and how to give it more
time (the time limit when the budget is its share, else the option), with any cause already seen,
never a FAIL for want of time: a graph cut already seen in the first backward is a FAIL all the same.

Parameters that should learn (``requires_grad``) and got no gradient in the first backward turn a
memorised batch into FAIL when their layer ran (the graph is cut: ``.detach()``) and WARN when it
never ran (an unused layer), with their names: the loss can fall through the parameters that do learn.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from ..spelling import fmt_num
from . import result as R
from .overfit_measure import (
    CalledModules,
    GradientEvidence,
    accuracy,
    gradient_evidence,
    looks_like_probabilities,
    loss_floor,
    misaligned,
)
from .preconditions import explain_backward_error, unregistered_layers
from .regularisation import dropout_off

STEPS = 200
LR = 1e-3
NEAR_ZERO_FRACTION = 0.1
CLASSIFICATION_LOSS = 0.1
REGRESSION_LOSS = 1e-3
TOKEN_ACCURACY = 0.95  # when there are more targets than samples, see needed_accuracy()
STILL_FALLING = 0.9  # the loss above its floor fell by >10% over the last quarter of the steps
SLOW = "The loss falls"  # the start of the "falls but not near zero" sentence
EXTEND = 5  # ... then train on, doubling the steps while it still falls, up to this many times the steps
TIME_BUDGET = 60.0  # seconds (option timeBudgetSeconds; the CLI and the editor pass a share of the time limit)
clock = time.monotonic  # a module attribute, so that a test can count steps instead of seconds
SEED_CAUSES = (
    "Seed 002: a model that cannot overfit one small batch has a fundamental bug: a broken loss, a broken backward, "
    "an optimizer not connected to the model's parameters, data and labels misaligned, or a model too small for the data. "
    "Do not start a full training run until this passes."
)


def passed(
    loss: float,
    first: float,
    accuracy: float | None,
    floor: float = 0.0,
    first_floor: float = 0.0,
    need: float = 1.0,
) -> bool:
    """Memorised (module docstring). ``floor``/``first_floor``: the loss floor now and at step 0; ``need``:
    the accuracy required (``TOKEN_ACCURACY`` when there are more targets than samples)."""
    if not math.isfinite(loss):
        return False
    if accuracy is not None:
        return accuracy >= need and loss <= max(CLASSIFICATION_LOSS, NEAR_ZERO_FRACTION * first)
    return loss - floor <= max(REGRESSION_LOSS, NEAR_ZERO_FRACTION * (first - first_floor))


def accuracy_of(ex, output) -> float | None:
    """Fraction of the batch classified right (per token for sequences); None when not class indices."""
    return accuracy(ex, output)


def needed_accuracy(ex) -> float:
    """100% of the samples; ``TOKEN_ACCURACY`` of the targets when there are more targets than samples
    (tokens, pixels): two sequences with the same context and different next tokens cannot both be
    predicted, and real text has them (a batch starting with the same character twice)."""
    import torch

    t, n = ex.targets, ex.batch_size()
    if isinstance(t, torch.Tensor) and n is None and t.dim():
        n = int(t.shape[0])  # keyword inputs that disagree on it: the targets are per sample
    if not isinstance(t, torch.Tensor) or n is None:
        return 1.0
    return TOKEN_ACCURACY if int((t >= 0).sum()) > n else 1.0


class _Run:
    """The numbers of one training run on the batch."""

    def __init__(self, need: float) -> None:
        self.need = need
        self.losses: list[float] = []
        self.accs: list[float | None] = []
        self.floors: list[float] = []
        self.evidence = GradientEvidence()
        self.backward_error: str | None = None
        self.extended_from: int | None = None
        self.stopped_by_time: float | None = None  # the time budget that stopped training on
        self.deadline: float | None = None  # clock() past which no further step starts
        self.cut_at: int | None = None  # the planned end of the stretch the deadline cut short
        self.share: float | None = None  # the budget is this share of the time limit (option timeBudgetShare)
        self.given = False  # the caller set timeBudgetSeconds (else TIME_BUDGET)
        self.seconds = 0.0  # spent training

    def passed(self) -> bool:
        return bool(self.losses) and passed(
            self.losses[-1], self.losses[0], self.accs[-1], self.floors[-1], self.floors[0], self.need
        )

    def still_learning(self, steps: int) -> bool:
        """Every step ran and the loss (above its floor) fell by a tenth over the last quarter of the run:
        more steps will tell. A plateau (a model too small, labels that contradict) does not."""
        ls, q = self.losses, max(1, len(self.losses) // 4)
        if len(ls) < steps or self.backward_error or not all(math.isfinite(v) for v in ls[-q:]):
            return False
        return ls[-1] - self.floors[-1] < STILL_FALLING * (ls[-q] - self.floors[-1])


def run(ex, options: dict, report: Callable[[float, str], None], result: dict) -> dict:
    import torch

    steps, lr = int(options.get("steps", STEPS)), float(options.get("lr", LR))
    model = ex.model
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        return _no_parameters(model, result)
    off = dropout_off(model)
    r = _Run(needed_accuracy(ex))
    budget = float(options.get("timeBudgetSeconds", TIME_BUDGET))
    r.given, r.share = "timeBudgetSeconds" in options, options.get("timeBudgetShare")
    started = clock()
    r.deadline = started + budget
    try:
        optimizer = torch.optim.Adam([p for _, p in named], lr=lr)
        _train(ex, model, named, optimizer, r, 0, steps, report, budget)
        planned = steps
        while not r.passed() and r.still_learning(planned) and planned < EXTEND * steps and r.stopped_by_time is None:
            more = min(planned, EXTEND * steps - planned)  # 200 -> 400 -> 800 -> 1000
            elapsed = clock() - started
            fits = int((budget - elapsed) / max(elapsed / max(1, len(r.losses)), 1e-9))
            if fits < more:  # as many steps as the time budget holds at the pace so far
                r.stopped_by_time, more = budget, fits
                if more < max(1, steps // 10):
                    break
            r.extended_from = r.extended_from or steps
            _train(ex, model, named, optimizer, r, planned, planned + more, report, budget)
            planned += more
    finally:
        off.restore()
        r.seconds = clock() - started
    went = f"{len(r.losses)} steps in all until the time budget stopped it" if r.cut_at else f"up to {planned} steps"
    said = [off.sentence()] + (
        [f"The loss was still falling at step {steps}: trained on while it fell, {went}."] if r.extended_from else []
    )
    result["inferred"] = list(result.get("inferred") or []) + [s for s in said if s]
    result["curve"] = _curve(r.losses, r.accs)
    result["details"] = _details(r, planned, lr, ex)
    result["details"]["stepLimit"] = EXTEND * steps
    result["details"]["dropoutOff"] = off.layers + off.attributes
    result["details"]["timeBudgetSeconds"] = budget
    result["details"]["stoppedByTime"] = r.stopped_by_time is not None and not r.passed()
    return _verdict(ex, model, r, steps, result)


def _train(ex, model, named, optimizer, r: _Run, start: int, stop: int, report, budget: float) -> None:
    """Steps ``start`` to ``stop``; stops early when memorised, on a non-finite loss or a failing backward,
    and once the clock passes ``r.deadline`` (the time budget ``budget``), keeping what ran."""
    for step in range(start, stop):
        optimizer.zero_grad(set_to_none=True)
        called = CalledModules(model) if step == 0 else None
        try:
            output = ex.output()
        finally:
            if called is not None:
                called.remove()
        loss = ex.loss(output)
        value = float(loss.detach())
        r.losses.append(value)
        r.accs.append(accuracy(ex, output))
        r.floors.append(loss_floor(ex, output) if step == 0 or r.floors[0] else 0.0)
        if not math.isfinite(value) or r.passed():
            break
        try:
            loss.backward()
        except RuntimeError as exc:  # "element 0 of tensors does not require grad": the graph is cut
            r.backward_error = str(exc)
            break
        if called is not None:
            r.evidence = gradient_evidence(model, named, called.ran)
        optimizer.step()
        if step % 10 == 0:
            report(step / stop, f"step {step}/{stop}: loss {fmt_num(value, 4)}")
        if r.deadline is not None and step + 1 < stop and clock() > r.deadline:
            r.stopped_by_time, r.cut_at = budget, stop
            break


def _verdict(ex, model, r: _Run, steps: int, result: dict) -> dict:
    name, ev = type(model).__name__, r.evidence
    if not r.passed() and r.cut_at is not None and not r.extended_from:  # the budget stopped the first stretch
        if not ev.cut:
            return _unfinished(ex, model, r, result)
        stopped = f"the time budget of {fmt_num(r.stopped_by_time or 0.0, 3)} s stopped it after {len(r.losses)} of {r.cut_at} steps"
        return _cut_fail(r, result, f"{name} has not memorised {_batch_words(ex)} yet ({stopped}, {_progress(r)})")
    if not r.passed():
        result["headline"], result["sentences"] = _diagnose(ex, model, r, steps)
        slow = r.still_learning(steps) and len(result["sentences"]) == 1 and result["sentences"][0].startswith(SLOW)
        result["verdict"] = R.WARN if slow else R.FAIL
        if slow:  # no cause found and the loss still falls: not memorised *yet*
            result["headline"] = (
                f"{name} has not memorised {_batch_words(ex)} yet, but the loss was still falling at step "
                f"{len(r.losses)} ({_progress(r)})."
            )
            result["sentences"] = [_slow_sentence(r, steps)]
        else:
            result["sentences"].append(SEED_CAUSES)
        return result
    memorised = f"{name} memorised the batch in {len(r.losses)} steps ({_progress(r)})"
    if ev.cut:
        return _cut_fail(r, result, memorised)
    if ev.unused:
        result["verdict"] = R.WARN
        result["headline"] = (
            f"{memorised}, but {len(ev.unused)} of {ev.total} parameter tensors are never used: {_names(ev.unused)}."
        )
        result["sentences"] = [_unused_sentence(ev.unused)]
        return result
    result["verdict"] = R.PASS
    result["headline"] = memorised + "."
    result["sentences"] = [
        "The model, the loss and the backward pass can learn: go on to the LR finder or to full training."
    ]
    if r.floors[-1] > 0:
        result["sentences"].append(_floor_sentence(r))
    return result


def _cut_fail(r: _Run, result: dict, before: str) -> dict:
    """FAIL: parameters whose layers ran got no gradient (a cut graph), memorised or not, stopped by time or not."""
    ev = r.evidence
    result["verdict"] = R.FAIL
    result["headline"] = (
        f"{before}, but {len(ev.cut)} of {ev.total} parameter tensors never received a gradient although "
        f"their layers ran: {_names(ev.cut)}."
    )
    result["sentences"] = [_cut_sentence(ev.cut)] + ([_unused_sentence(ev.unused)] if ev.unused else [])
    return result


def _slow_sentence(r: _Run, steps: int) -> str:
    """Why a run that still learns stopped, and how many more steps its pace asks for."""
    ran = len(r.losses)
    budget = f"the time budget of {fmt_num(r.stopped_by_time, 3)} s (option timeBudgetSeconds)"
    why = (
        f"{budget} ran out at step {ran} of {r.cut_at}"
        if r.cut_at is not None
        else f"training on would not fit {budget}"
        if r.stopped_by_time is not None
        else f"{ran} steps is the limit ({EXTEND} times the option steps, {steps})"
    )
    more = _steps_to_go(r)
    pace = f" At the pace of its last {max(1, ran // 4)} steps it needs about {more} more." if more else ""
    pace += f" {_more_time(r)}." if r.stopped_by_time is not None else ""
    return (
        f"It learns slowly rather than not at all; the test stopped because {why}.{pace} Some models do need "
        "that long (an LSTM language model can take several hundred Adam steps at lr 1e-3): run it with more steps "
        "(option steps) or a larger learning rate (option lr; the LR finder suggests one). A plateau would be a FAIL."
    )


def _more_time(r: _Run) -> str:
    """Where the budget came from and how to raise it: the time limit when the budget is its share (the
    editor, the CLI), else the option itself."""
    if r.share:
        return (
            f"The time budget is {r.share:.0%} of the check's time limit: raise the setting "
            "torchDoctor.checks.timeoutSeconds, or --timeout on the command line"
        )
    origin = "was set by" if r.given else f"is the default ({fmt_num(TIME_BUDGET, 3)} s) of"
    return (
        f"The time budget {origin} the option timeBudgetSeconds: raise it, keeping the check's time limit "
        "(torchDoctor.checks.timeoutSeconds, or --timeout on the command line) above it"
    )


def _unfinished(ex, model, r: _Run, result: dict) -> dict:
    """WARN: the time budget stopped the first stretch before the batch was memorised; no verdict on the model."""
    ran, planned, budget = len(r.losses), r.cut_at or len(r.losses), r.stopped_by_time or 0.0
    pace = r.seconds / max(1, ran)
    result["verdict"] = R.WARN
    result["headline"] = (
        f"{type(model).__name__} has not memorised {_batch_words(ex)} yet: the time budget of "
        f"{fmt_num(budget, 3)} s stopped the test after {ran} of {planned} steps ({_progress(r)})."
    )
    holds = f" (a time limit of about {fmt_num(pace * planned / r.share, 2)} s holds them)" if r.share else ""
    result["sentences"] = [
        f"One step took about {fmt_num(pace, 3)} s, so {planned} steps need about {fmt_num(pace * planned, 3)} s"
        f"{holds}. {_more_time(r)}; a smaller model or batch in torchdoctor_example() is faster. An unfinished "
        "run says nothing against the model, so this is not a FAIL."
    ]
    seen = _diagnose(ex, model, r, planned, by_curve=False)[1]
    if seen:
        result["sentences"].append("Seen in the steps that ran: " + " ".join(seen))
    return result


def _steps_to_go(r: _Run) -> int | None:
    """Steps until the loss above its floor reaches the PASS threshold, extrapolating the geometric
    decay of the last quarter of the run; None when that cannot be estimated."""
    ls, q = r.losses, max(1, len(r.losses) // 4)
    floor = r.floors[-1]
    start, end = ls[-q - 1] - floor, ls[-1] - floor
    if r.accs[-1] is not None:
        goal = max(CLASSIFICATION_LOSS, NEAR_ZERO_FRACTION * ls[0]) - floor
    else:
        goal = max(REGRESSION_LOSS, NEAR_ZERO_FRACTION * (ls[0] - r.floors[0]))
    if len(ls) <= q or not (start > end > 0) or goal <= 0 or end <= goal:
        return None
    rate = math.log(start / end) / q
    return max(1, math.ceil(math.log(end / goal) / rate))


def _progress(r: _Run) -> str:
    text = f"loss {fmt_num(r.losses[0], 4)} -> {fmt_num(r.losses[-1], 4)}"
    if r.floors and r.floors[-1] > 0:
        text += f", floor {fmt_num(r.floors[-1], 4)}"
    return text + (f", accuracy {r.accs[-1]:.0%}" if r.accs and r.accs[-1] is not None else "")


def _floor_sentence(r: _Run) -> str:
    return (
        f"The targets are soft, so even a perfect prediction has a loss of {fmt_num(r.floors[-1], 4)} (the loss with "
        "the prediction replaced by the targets, e.g. BCE(x, x)); memorisation is judged on the loss above that floor."
    )


def _batch_words(ex) -> str:
    from .example.core import tensors_in

    first = next(tensors_in((ex.inputs, ex.kwargs)), None)
    return f"one batch (input {tuple(first.shape)})" if first is not None else "one batch"


def _names(names: list, shown: int = 6) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _cut_sentence(names: list) -> str:
    return (
        f"Graph cut: {_names(names)} took part in the forward but no gradient reaches them, so they never learn; the "
        "loss falls through the other parameters. Look for .detach(), .item(), .data, .numpy() or torch.no_grad() "
        "between these layers and the loss."
    )


def _unused_sentence(names: list) -> str:
    return (
        f"Unused parameters: the layers of {_names(names)} never ran in the forward, so they get no gradient. "
        "Delete them, freeze them (requires_grad_(False)), or check the branch of forward that should call them."
    )


def _curve(losses: list, accs: list) -> dict:
    series = [{"name": "loss", "points": [[i, v] for i, v in enumerate(losses)]}]
    if accs and accs[0] is not None:
        series.append({"name": "accuracy", "axis": "right", "points": [[i, a] for i, a in enumerate(accs)]})
    return {"xLabel": "step", "yLabel": "loss", "xScale": "linear", "series": series, "marks": []}


def _details(r: _Run, steps, lr, ex) -> dict:
    losses, accs = r.losses, r.accs
    finite = [v for v in losses if math.isfinite(v)]
    floor = r.floors[-1] if r.floors else 0.0
    return {
        "steps": len(losses),
        "maxSteps": steps,
        "lr": lr,
        "optimizer": "Adam",
        "batchSize": ex.batch_size(),
        "loss": ex.loss_name,
        "initialLoss": losses[0],
        "finalLoss": losses[-1],
        "minLoss": min(finite) if finite else None,
        "lossFloor": floor,
        "finalAccuracy": accs[-1],
        "noGradient": {"cut": r.evidence.cut, "unused": r.evidence.unused},
        "requiredAccuracy": r.need if accs[-1] is not None else None,
        "criterion": f"accuracy >= {r.need:.0%} and loss <= max(0.1, 10% of the first loss)"
        if accs[-1] is not None
        else "loss - floor <= max(1e-3, 10% of (first loss - floor))"
        if floor > 0
        else "loss <= max(1e-3, 10% of the first loss)",
    }


def _no_parameters(model, result: dict) -> dict:
    result["verdict"] = R.FAIL
    result["headline"] = f"{type(model).__name__} has no trainable parameters, so no optimizer can train it."
    result["sentences"] = unregistered_layers(model) + [
        "Optimizer not connected to the parameters: layers kept in a plain Python list or dict are invisible to "
        "model.parameters(); use nn.ModuleList / nn.ModuleDict, and wrap learnable tensors in nn.Parameter.",
        SEED_CAUSES,
    ]
    return result


def _diagnose(ex, model, r: _Run, steps: int, by_curve: bool = True) -> tuple[str, list[str]]:
    """Headline and the causes the evidence points to, most specific first (``by_curve``: else the
    curve's shape, when nothing more specific was found)."""
    losses, ev = r.losses, r.evidence
    first, last = losses[0], losses[-1]
    name, ran = type(model).__name__, len(losses)
    if r.backward_error is not None:
        head = f"{name} could not train: loss.backward() failed at step {ran - 1}, so the test stopped after {ran} of {steps} steps."
    elif not math.isfinite(last):
        head = f"The loss became {last} at step {ran - 1}, so the test stopped after {ran} of {steps} steps."
    else:
        head = f"{name} did not memorise {_batch_words(ex)} in {ran} steps ({_progress(r)})."
    why: list[str] = unregistered_layers(model)
    if not math.isfinite(last):
        why.append(
            "Broken loss or numerics: log(0), a division by zero or exp() overflow in the model or the loss; or a learning rate too high. Clamp probabilities to [eps, 1-eps], use log-softmax / the fused losses."
        )
    if ev.cut or ev.unused:
        names = ev.cut + ev.unused
        why.append(
            f"Optimizer not connected to the parameters that matter: {_names(names)} never received a gradient. "
            + (
                "They are unused in forward, or the graph is cut (.detach(), .item(), .data, .numpy(), torch.no_grad())."
            )
        )
    elif ev.all_zero:
        why.append(
            "Every gradient is exactly zero after the first backward: dead ReLUs (bad initialisation), saturated activations, or an output that does not depend on the parameters."
        )
    if r.backward_error is not None:
        why.append(explain_backward_error(r.backward_error))
    probs = looks_like_probabilities(ex)
    if probs:
        why.append(probs)
    why += misaligned(ex)
    if by_curve and math.isfinite(last) and not why:
        why.append(
            _by_curve(
                first - r.floors[0], last - r.floors[-1], min(v for v in losses if math.isfinite(v)) - r.floors[-1], ran
            )
        )
    return head, why


def _by_curve(first: float, last: float, best: float, steps: int) -> str:
    if last > first * 1.05:
        return (
            f"The loss rose from {fmt_num(first, 4)} to {fmt_num(last, 4)}: a broken loss (a sign error, maximising instead of minimising) "
            "or a learning rate too high for this model."
        )
    if best > first * 0.99:
        return (
            f"The loss did not move ({fmt_num(first, 4)} -> {fmt_num(last, 4)}): the gradients do not reach the parameters in a useful way "
            "(dead ReLUs, vanishing gradients, an output that ignores the input) or the loss does not match the output."
        )
    return (
        f"{SLOW} ({fmt_num(first, 4)} -> {fmt_num(last, 4)}, {1 - last / first:.0%} lower) but not near zero in {steps} steps: the model may be "
        "too small to memorise the batch, or it learns too slowly (try more steps or a larger lr with the LR finder). "
        "If this is your real batch, check that labels and inputs are aligned."
    )
