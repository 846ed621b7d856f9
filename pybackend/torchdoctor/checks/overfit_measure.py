"""What the overfit test measures at each step besides the loss (worker side, imports torch lazily).

- :func:`accuracy`: the fraction of targets predicted right, per sample for ``(B, C)`` and per
  token for a language model's ``(B, T, V)`` against ``(B, T)``; negative targets (-100 in Hugging
  Face, -1 in nanoGPT) are ignored, as the losses ignore them. A model that computes its own loss
  from labels it shifts itself (Hugging Face causal LMs: ``labels = input_ids``) is scored with
  the alignment whose cross-entropy reproduces the model's own loss.
- :func:`loss_floor`: the loss of a perfect prediction when the targets are soft (floats): the
  loss with the prediction replaced by the targets. Binary cross-entropy against targets in (0, 1)
  cannot reach 0: its floor is BCE(x, x), a VAE's is that plus its KL term at the current mean and
  log-variance. Memorisation is judged on the loss above the floor.
- :func:`gradient_evidence`: after the first backward, parameters that should learn and got no
  gradient, split by whether their layer ran in the forward (then the graph is cut between them
  and the loss: ``.detach()``) or never ran (an unused layer).
- :func:`looks_like_probabilities` and :func:`misaligned`: evidence for a run that did not memorise
  (softmax before cross-entropy; identical inputs with different targets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .example.core import MODEL, OUTPUT, class_dim, own_loss


def accuracy(ex, output) -> float | None:
    """Fraction of the (non-ignored) targets predicted right; None when the targets are not class indices."""
    if not ex.is_classification:
        return None
    pred, t = ex.prediction(output).detach(), ex.targets
    dim = class_dim(pred, t)
    if dim is None:
        return None
    if dim == -1 and pred.dim() >= 3 and ex.loss_sees == MODEL and pred.shape[1] > 1 and _shifted(pred, t, output):
        pred, t = pred[:, :-1], t[:, 1:]
    hits = pred.argmax(dim=dim) == t
    valid = t >= 0
    n = int(valid.sum())
    return float((hits & valid).sum()) / n if n else None


def _shifted(pred, t, output) -> bool:
    """True when the model's own loss is the cross-entropy of position i predicting target i+1."""
    loss = own_loss(output)
    if loss is None:
        return False
    target = float(loss.detach())
    return abs(_ce(pred[:, :-1], t[:, 1:]) - target) < abs(_ce(pred, t) - target)


def _ce(pred, t) -> float:
    """Mean cross-entropy over the targets that are not ignored (negative)."""
    logp = pred.reshape(-1, pred.shape[-1]).float().log_softmax(-1)
    t = t.reshape(-1)
    valid = t >= 0
    if not bool(valid.any()):
        return float("inf")
    return float(-logp[valid].gather(1, t[valid].unsqueeze(1)).mean())


def loss_floor(ex, output) -> float:
    """The loss of a perfect prediction for soft targets (0.0 when not computable or not soft)."""
    import torch

    t = ex.targets
    if ex.loss_sees == MODEL or not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return 0.0
    pred = ex.prediction(output)
    if not isinstance(pred, torch.Tensor) or pred.numel() != t.numel() or pred.dtype != t.dtype:
        return 0.0
    perfect = t.detach().reshape(pred.shape)
    candidate = perfect if ex.loss_sees == OUTPUT else _replace(output, pred, perfect)
    try:
        with torch.no_grad():
            value = float(ex.loss(candidate))
    except Exception:  # the loss does not accept its targets as an output (a logits loss): no floor
        return 0.0
    return value if math.isfinite(value) and value > 0 else 0.0


def _replace(out, old, new):
    """``out`` with the tensor ``old`` replaced by ``new``; the other outputs detached."""
    import torch

    if out is old:
        return new
    if isinstance(out, torch.Tensor):
        return out.detach()
    if isinstance(out, dict):
        return {k: _replace(v, old, new) for k, v in out.items()}
    if isinstance(out, (tuple, list)):
        return type(out)(_replace(v, old, new) for v in out)
    return out


@dataclass
class GradientEvidence:
    """Parameters that should learn and got no gradient after the first backward."""

    cut: list = field(default_factory=list)  # their layer ran: the graph is cut between it and the loss
    unused: list = field(default_factory=list)  # their layer never ran in the forward
    all_zero: bool = False  # every gradient exactly zero
    total: int = 0


class CalledModules:
    """Forward hooks on every module for one forward: which ones ran."""

    def __init__(self, model):
        self.ran: set[int] = set()
        self._handles = [m.register_forward_hook(self._hook) for m in model.modules()]

    def _hook(self, module, args, out) -> None:
        self.ran.add(id(module))

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


def gradient_evidence(model, named: list, ran: set) -> GradientEvidence:
    ev = GradientEvidence(total=len(named))
    for name, p in named:
        if p.grad is not None:
            continue
        owner = name.rsplit(".", 1)[0] if "." in name else ""
        try:
            module = model.get_submodule(owner)
        except AttributeError:
            module = None
        (ev.cut if module is not None and id(module) in ran else ev.unused).append(name)
    got = [p for _, p in named if p.grad is not None]
    ev.all_zero = bool(got) and not ev.cut and not ev.unused and all(float(p.grad.abs().max()) == 0.0 for p in got)
    return ev


def looks_like_probabilities(ex) -> str | None:
    """Softmax before cross-entropy: the loss is bounded away from zero (broken loss)."""
    import torch

    if ex.loss_name != "cross-entropy":
        return None
    with torch.no_grad():
        out = ex.prediction(ex.output())
    if out.dim() != 2 or out.min() < 0 or out.max() > 1:
        return None
    if not torch.allclose(out.sum(dim=1), torch.ones(out.shape[0], dtype=out.dtype, device=out.device), atol=1e-3):
        return None
    return (
        "Broken loss: the output rows are probabilities (they sum to 1), so the model ends in a softmax, but "
        "CrossEntropyLoss applies log-softmax itself and expects raw logits. Softmax then cross-entropy cannot reach "
        "a loss near zero and learns slowly. Remove the final softmax (apply it only at inference)."
    )


def misaligned(ex) -> list[str]:
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
