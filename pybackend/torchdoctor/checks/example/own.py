"""Models that compute their own loss: use it when the forward offers one.

nanoGPT and minGPT: ``forward(idx, targets=None)`` returns ``(logits, loss)`` when given the
targets (and nanoGPT only the last position's logits without them, so our own cross-entropy
could not even be computed); Hugging Face: ``model(**batch, labels=...)`` returns a ``ModelOutput``
whose ``.loss`` is the model's training loss (shifted for causal LMs, masked with -100). The
model's loss is the one its training uses, so the overfit test and the LR finder train on it.

One forward (under ``torch.no_grad()``) decides: the example's targets are passed as the
forward's optional ``targets``/``labels`` keyword when it has one and the user did not pass them,
and if what comes back holds a loss, the example's loss is the model's.
"""

from __future__ import annotations

import inspect

from .. import result as R
from .core import MODEL, Example, ExampleError, model_loss, own_loss
from .load import user_traceback

TARGET_NAMES = ("targets", "target", "labels", "label", "y")  # a forward's optional targets argument


def target_parameter(model, n_positional: int, kwargs: dict) -> str | None:
    """The forward's optional targets parameter not already filled by the example's arguments."""
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for p in params:
        if p.name not in TARGET_NAMES or p.default is p.empty or p.kind == p.POSITIONAL_ONLY or p.name in kwargs:
            continue
        if p in positional and positional.index(p) < n_positional:
            continue  # the user passed it positionally
        return p.name
    return None


def adopt_own_loss(ex: Example, required: bool = False) -> bool:
    """Make ``ex`` use the model's own loss when its forward returns one; say so in ``ex.inferred``."""
    import torch

    ex.target_kwarg = target_parameter(ex.model, len(ex.inputs), ex.kwargs) if ex.targets is not None else None
    try:
        with torch.no_grad():
            out = ex.forward()
    except Exception as exc:
        given = f" when given {ex.target_kwarg}=targets (as your training calls it)" if ex.target_kwarg else ""
        ex.target_kwarg = None
        if not required and not given:
            return False  # complete() runs the forward again and explains the failure
        raise ExampleError(
            R.ERR_FORWARD,
            f"The forward of {type(ex.model).__name__} raises{given}, so this check cannot run: "
            f"{type(exc).__name__}: {exc}",
            detail=user_traceback(exc),
            inferred=ex.inferred,
        ) from None
    if own_loss(out) is None:
        ex.target_kwarg = None
        if required:
            model_loss(out)  # raises the message that says what came back
        return False
    if ex.targets is None:  # the labels in the keyword arguments serve the accuracy
        ex.targets = next((ex.kwargs[k] for k in TARGET_NAMES if torch.is_tensor(ex.kwargs.get(k))), None)
    if ex.loss_sees != MODEL:
        ex.loss_sees, ex.loss_fn, ex.loss_name = MODEL, model_loss, "model"
        ex.inferred.append(_sentence(ex, out))
    return True


def _sentence(ex: Example, out) -> str:
    name = type(ex.model).__name__
    where = f"{type(out).__name__}.loss" if isinstance(out, dict) else "the scalar in the tuple it returns"
    if ex.target_kwarg:
        return f"Loss: {name}'s own: its forward, given {ex.target_kwarg}=targets, returns it ({where})."
    return f"Loss: {name}'s own, returned by its forward ({where})."
