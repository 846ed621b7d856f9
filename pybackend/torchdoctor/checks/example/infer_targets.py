"""Targets and a loss for a batch without targets, read from one forward's output (:func:`infer_targets`).

The first rule that matches wins; each says what it assumed in ``Example.inferred``:

1. **Reconstruction** (an autoencoder, a VAE): one float input, and the forward's first output has
   as many values per sample as the input, and either comes with other outputs (a VAE's
   ``(recon, mu, logvar)``) or lies in ``[0, 1]`` / ``[-1, 1]`` (a sigmoid / tanh decoder). The target
   is the input itself, the loss MSE on the reconstruction. When we drew the input and the decoder
   is bounded, the input is redrawn inside that range (a sigmoid cannot reproduce ``randn``'s
   negative values, and would fail for our sake). A VAE's KL term needs the mean and log-variance
   only its author can name: the sentence says so and points to ``torchdoctor_example()``.
2. **Next token** (a language model): integer inputs ``(B, T)`` and an output ``(B, T, V)`` with
   ``V`` above every input id: the targets are the inputs shifted by one (position t predicts
   token t + 1, the last one a fresh draw), the loss cross-entropy per token. With ``V`` too small
   for the ids (a tagger), random classes per token in ``[0, V)``.
3. **Classification**: an output ``(B, C)`` with ``C >= 2``: cross-entropy against random classes.
4. **Anything else**: MSE against random targets of the output's shape; drawn inside the output's
   range when it stays in ``[0, 1]`` / ``[-1, 1]`` (a DCGAN generator's tanh cannot reach ``randn``'s
   tails, and the overfit test would fail for our sake).

Random draws use a private ``torch.Generator`` (seed option + 1), as the inputs do.
"""

from __future__ import annotations

from ..discovery import EXAMPLE_FUNCTION
from .core import Example, cross_entropy, pick_output, tensors_in

UNIT, SYMMETRIC = (0.0, 1.0), (-1.0, 1.0)  # a sigmoid's and a tanh's output range


def infer_targets(ex: Example, raw, g) -> None:
    """Set ``ex.targets``, ``ex.loss_fn`` and ``ex.loss_name`` from ``raw``, what the forward returned."""
    out = pick_output(raw)
    for rule in (_reconstruction, _next_token, _classes):
        if rule(ex, raw, out, g):
            return
    import torch
    import torch.nn.functional as F

    bounds = _bounds(out) if out.is_floating_point() and out.dim() >= 2 else None
    if bounds is None:
        ex.targets = torch.randn(tuple(out.shape), generator=g).to(dtype=out.dtype, device=out.device)
        inside = ""
    else:  # a tanh / sigmoid output cannot reach randn's tails: a floor we made, not the model's
        lo, hi = bounds[0] + 0.05 * (bounds[1] - bounds[0]), bounds[1] - 0.05 * (bounds[1] - bounds[0])
        drawn = torch.rand(tuple(out.shape), generator=g) * (hi - lo) + lo
        ex.targets = drawn.to(dtype=out.dtype, device=out.device)
        inside = f", drawn in [{lo:g}, {hi:g}] inside the output's range [{bounds[0]:g}, {bounds[1]:g}]"
    ex.loss_fn, ex.loss_name = F.mse_loss, "mse"
    ex.inferred.append(
        f"Output {tuple(out.shape)} is not (batch, classes): MSE against random targets of the same shape{inside}."
    )


def _single_input(ex: Example):
    found = list(tensors_in((ex.inputs, ex.kwargs)))
    return found[0] if len(found) == 1 else None


def _bounds(out) -> tuple[float, float] | None:
    """The decoder's range when its output stays in [0, 1] or [-1, 1]; None otherwise or for softmax rows."""
    import torch

    lo, hi = float(out.min()), float(out.max())
    if out.dim() == 2 and lo >= 0 and torch.allclose(out.sum(dim=1), torch.ones_like(out[:, 0]), atol=1e-3):
        return None  # probabilities of classes (a softmax), not pixels
    for bounds in (UNIT, SYMMETRIC):
        if bounds[0] <= lo and hi <= bounds[1]:
            return bounds
    return None


def _reconstruction(ex: Example, raw, out, g) -> bool:
    import torch
    import torch.nn.functional as F

    x = _single_input(ex)
    if x is None or not x.is_floating_point() or x.dim() < 2 or out.dim() < 2 or not out.is_floating_point():
        return False
    if out.shape[0] != x.shape[0] or out[0].numel() != x[0].numel():
        return False
    several = len(list(tensors_in(raw))) > 1
    bounds = _bounds(out)
    if not several and bounds is None:
        return False
    redrawn = ""
    if bounds is not None and ex.source == "inferred" and (float(x.min()) < bounds[0] or float(x.max()) > bounds[1]):
        lo, hi = bounds
        new = (torch.rand(tuple(x.shape), generator=g) * (hi - lo) + lo).to(dtype=x.dtype, device=x.device)
        ex.inputs = tuple(new if v is x else v for v in ex.inputs)
        x = new
        redrawn = f" The input is drawn in [{lo:g}, {hi:g}], the range of the output, so that it can be reproduced."
    ex.targets = x.detach().reshape(out.shape)
    ex.loss_fn, ex.loss_name = F.mse_loss, "mse"
    what = (
        f"Output {tuple(out.shape)} (the first of {type(raw).__name__} of {len(list(tensors_in(raw)))} tensors)"
        if several
        else f"Output {tuple(out.shape)} in [{bounds[0]:g}, {bounds[1]:g}]"  # type: ignore[index]
    )
    ex.inferred.append(
        f"{what} has the input's {x[0].numel()} values per sample: a reconstruction (an autoencoder). "
        f"Loss: MSE between it and the input.{redrawn}"
        + (
            f" A VAE's KL term needs the mean and log-variance, which only you can name: give your loss in a "
            f"{EXAMPLE_FUNCTION}() to test it too."
            if several
            else ""
        )
    )
    return True


def _next_token(ex: Example, raw, out, g) -> bool:
    import torch

    x = _single_input(ex)
    if x is None or x.is_floating_point() or x.is_complex() or x.dim() != 2 or out.dim() != 3:
        return False
    if tuple(out.shape[:2]) != tuple(x.shape) or out.shape[-1] < 2:
        return False
    vocab = int(out.shape[-1])
    if int(x.max()) < vocab and int(x.min()) >= 0:
        last = torch.randint(0, vocab, (x.shape[0], 1), generator=g).to(x.device)
        ex.targets = torch.cat([x[:, 1:], last], dim=1)
        ex.inferred.append(
            f"Output {tuple(out.shape)} scores {vocab} tokens at each of the {x.shape[1]} positions of the integer "
            f"input: a language model. Targets: the next token (the input shifted by one position, the last one "
            f"drawn at random); loss: cross-entropy per token."
        )
    else:
        ex.targets = torch.randint(0, vocab, tuple(x.shape), generator=g).to(x.device)
        ex.inferred.append(
            f"Output {tuple(out.shape)} scores {vocab} classes at each position, fewer than the input's ids: "
            f"cross-entropy per position against random classes in [0, {vocab})."
        )
    ex.loss_fn, ex.loss_name = cross_entropy, "cross-entropy"
    return True


def _classes(ex: Example, raw, out, g) -> bool:
    import torch
    import torch.nn.functional as F

    if out.dim() != 2 or out.shape[1] < 2:
        return False
    ex.targets = torch.randint(0, out.shape[1], (out.shape[0],), generator=g).to(out.device)
    ex.loss_fn, ex.loss_name = F.cross_entropy, "cross-entropy"
    ex.inferred.append(
        f"Output {tuple(out.shape)} is (batch, classes): cross-entropy against random classes in [0, {out.shape[1]})."
    )
    return True
