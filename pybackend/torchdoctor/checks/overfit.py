"""Overfit one batch (seed 002's "most important debugging technique").

Train the model on one small batch (8 samples by default) with Adam, lr 1e-3,
for up to 200 steps. A healthy model and training loop memorise it: the loss
falls near zero and, for classification, accuracy reaches 100%. If not, the
model or the loop has a fundamental bug; the result says which of the seed's
causes the evidence points to (broken loss, optimizer not connected to the
parameters, data and labels misaligned, model too small).

PASS criterion, "near zero" made measurable (the run stops as soon as it holds):
- classification (integer class targets): accuracy 100% and loss <= max(0.1, 10% of the
  first step's loss); 0.1 is the seed's threshold, the 10% keeps it fair to many classes;
- anything else (MSE, custom losses on float targets): loss <= max(1e-3, 10% of the first loss).
A model ending in a softmax reaches 100% accuracy but not this loss: that is the point.
"""

from __future__ import annotations

import math
from typing import Callable

from ..spelling import fmt_num
from . import result as R
from .preconditions import explain_backward_error, unregistered_layers

STEPS = 200
LR = 1e-3
NEAR_ZERO_FRACTION = 0.1
CLASSIFICATION_LOSS = 0.1
REGRESSION_LOSS = 1e-3
SEED_CAUSES = (
    "Seed 002: a model that cannot overfit one small batch has a fundamental bug: a broken loss, a broken backward, "
    "an optimizer not connected to the model's parameters, data and labels misaligned, or a model too small for the data. "
    "Do not start a full training run until this passes."
)


def passed(loss: float, first: float, accuracy: float | None) -> bool:
    if not math.isfinite(loss):
        return False
    if accuracy is not None:
        return accuracy >= 1.0 and loss <= max(CLASSIFICATION_LOSS, NEAR_ZERO_FRACTION * first)
    return loss <= max(REGRESSION_LOSS, NEAR_ZERO_FRACTION * first)


def accuracy_of(ex, output) -> float | None:
    """Fraction of the batch classified right; None when the targets are not class indices."""
    if not ex.is_classification or output.dim() != ex.targets.dim() + 1:
        return None
    return float((output.argmax(dim=1) == ex.targets).float().mean())


def run(ex, options: dict, report: Callable[[float, str], None], result: dict) -> dict:
    import torch

    steps, lr = int(options.get("steps", STEPS)), float(options.get("lr", LR))
    model = ex.model
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        return _no_parameters(model, result)
    optimizer = torch.optim.Adam([p for _, p in named], lr=lr)
    losses, accs, stuck = [], [], None
    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        output = ex.output()
        loss = ex.loss(output)
        value = float(loss.detach())
        acc = accuracy_of(ex, output.detach())
        losses.append(value)
        accs.append(acc)
        if not math.isfinite(value) or passed(value, losses[0], acc):
            break
        try:
            loss.backward()
        except RuntimeError as exc:  # a cut graph, a graph freed by an earlier step, an in-place change
            stuck = str(exc)
            break
        if step == 0:
            stuck = _first_step_evidence(named)
        optimizer.step()
        if step % 10 == 0:
            report(step / steps, f"step {step}/{steps}: loss {fmt_num(value, 4)}")
    result["curve"] = _curve(losses, accs)
    result["details"] = _details(losses, accs, steps, lr, ex)
    ok = passed(losses[-1], losses[0], accs[-1])
    result["verdict"] = R.PASS if ok else R.FAIL
    if ok:
        result["headline"] = (
            f"{type(model).__name__} memorised the batch in {len(losses)} steps (loss {fmt_num(losses[0], 4)} -> {fmt_num(losses[-1], 4)}"
            + (f", accuracy {accs[-1]:.0%})." if accs[-1] is not None else ").")
        )
        result["sentences"] = [
            "The model, the loss and the backward pass can learn: go on to the LR finder or to full training."
        ]
        return result
    result["headline"], result["sentences"] = _diagnose(ex, model, losses, accs, stuck, steps)
    result["sentences"].append(SEED_CAUSES)
    return result


def _curve(losses: list, accs: list) -> dict:
    series = [{"name": "loss", "points": [[i, v] for i, v in enumerate(losses)]}]
    if accs and accs[0] is not None:
        series.append({"name": "accuracy", "axis": "right", "points": [[i, a] for i, a in enumerate(accs)]})
    return {"xLabel": "step", "yLabel": "loss", "xScale": "linear", "series": series, "marks": []}


def _details(losses, accs, steps, lr, ex) -> dict:
    finite = [v for v in losses if math.isfinite(v)]
    return {
        "steps": len(losses),
        "maxSteps": steps,
        "lr": lr,
        "optimizer": "Adam",
        "batchSize": int(ex.inputs[0].shape[0])
        if ex.inputs and hasattr(ex.inputs[0], "shape") and ex.inputs[0].dim()
        else None,
        "initialLoss": losses[0],
        "finalLoss": losses[-1],
        "minLoss": min(finite) if finite else None,
        "finalAccuracy": accs[-1],
        "criterion": "accuracy 100% and loss <= max(0.1, 10% of the first loss)"
        if accs[-1] is not None
        else "loss <= max(1e-3, 10% of the first loss)",
    }


def _first_step_evidence(named) -> str | None:
    """After the first backward: parameters that got no gradient, or all-zero gradients."""
    no_grad = [n for n, p in named if p.grad is None]
    if no_grad:
        return "nograd:" + ",".join(no_grad)
    if all(float(p.grad.abs().max()) == 0.0 for _, p in named):
        return "zerograd"
    return None


def _no_parameters(model, result: dict) -> dict:
    result["verdict"] = R.FAIL
    result["headline"] = f"{type(model).__name__} has no trainable parameters, so no optimizer can train it."
    result["sentences"] = unregistered_layers(model) + [
        "Optimizer not connected to the parameters: layers kept in a plain Python list or dict are invisible to "
        "model.parameters(); use nn.ModuleList / nn.ModuleDict, and wrap learnable tensors in nn.Parameter.",
        SEED_CAUSES,
    ]
    return result


def _diagnose(ex, model, losses, accs, stuck, steps) -> tuple[str, list[str]]:
    """Headline and the causes the evidence points to, most specific first."""
    first, last = losses[0], losses[-1]
    name = type(model).__name__
    head = f"{name} did not memorise one batch of {len(ex.targets) if ex.targets is not None else '?'} samples in {steps} steps (loss {fmt_num(first, 4)} -> {fmt_num(last, 4)}"
    head += f", accuracy {accs[-1]:.0%})." if accs[-1] is not None else ")."
    why: list[str] = unregistered_layers(model)
    if not math.isfinite(last):
        head = f"The loss became {last} at step {len(losses) - 1}."
        why.append(
            "Broken loss or numerics: log(0), a division by zero or exp() overflow in the model or the loss; or a learning rate too high. Clamp probabilities to [eps, 1-eps], use log-softmax / the fused losses."
        )
    if stuck and stuck.startswith("nograd:"):
        names = stuck.split(":", 1)[1].split(",")
        why.append(
            f"Optimizer not connected to the parameters that matter: {', '.join(names[:6])}{' ...' if len(names) > 6 else ''} never received a gradient. "
            "They are unused in forward, or the graph is cut (.detach(), .item(), .data, .numpy(), torch.no_grad())."
        )
    elif stuck == "zerograd":
        why.append(
            "Every gradient is exactly zero after the first backward: dead ReLUs (bad initialisation), saturated activations, or an output that does not depend on the parameters."
        )
    elif stuck:
        why.append(explain_backward_error(stuck))
    probs = _looks_like_probabilities(ex)
    if probs:
        why.append(probs)
    why += _misaligned(ex)
    if math.isfinite(last) and not why:
        why.append(_by_curve(first, last, min(v for v in losses if math.isfinite(v)), steps))
    return head, why


def _looks_like_probabilities(ex) -> str | None:
    """Softmax before cross-entropy: the loss is bounded away from zero (broken loss)."""
    import torch

    if ex.loss_name != "cross-entropy":
        return None
    with torch.no_grad():
        out = ex.output()
    if out.dim() != 2 or out.min() < 0 or out.max() > 1:
        return None
    if not torch.allclose(out.sum(dim=1), torch.ones(out.shape[0], dtype=out.dtype, device=out.device), atol=1e-3):
        return None
    return (
        "Broken loss: the output rows are probabilities (they sum to 1), so the model ends in a softmax, but "
        "CrossEntropyLoss applies log-softmax itself and expects raw logits. Softmax then cross-entropy cannot reach "
        "a loss near zero and learns slowly. Remove the final softmax (apply it only at inference)."
    )


def _misaligned(ex) -> list[str]:
    """Identical inputs with different targets: no model can fit them (data and labels misaligned)."""
    import torch

    x = ex.inputs[0] if ex.inputs else None
    t = ex.targets
    if not isinstance(x, torch.Tensor) or t is None or x.dim() == 0 or x.shape[0] != t.shape[0]:
        return []
    flat_x = x.reshape(x.shape[0], -1)
    flat_t = t.reshape(t.shape[0], -1)
    for i in range(x.shape[0]):
        for j in range(i + 1, x.shape[0]):
            if torch.equal(flat_x[i], flat_x[j]) and not torch.equal(flat_t[i], flat_t[j]):
                return [
                    f"Data and labels misaligned: samples {i} and {j} of the batch have identical inputs but different targets, so no model can fit both. Check how inputs and labels are paired (shuffling one but not the other, an off-by-one)."
                ]
    return []


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
        f"The loss falls ({fmt_num(first, 4)} -> {fmt_num(last, 4)}, {1 - last / first:.0%} lower) but not near zero in {steps} steps: the model may be "
        "too small to memorise the batch, or it learns too slowly (try more steps or a larger lr with the LR finder). "
        "If this is your real batch, check that labels and inputs are aligned."
    )
