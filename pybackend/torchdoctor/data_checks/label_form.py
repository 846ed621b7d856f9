"""One-hot rows against class indices: the labels' form against the loss in use, when it is known.

``nn.CrossEntropyLoss`` takes class indices of shape (N,) (int64), or class probabilities of the
output's shape (N, C), which must be floating point (torch >= 1.10): float one-hot rows are valid
for it, integer ones make it raise. ``NLLLoss`` takes indices only. ``BCEWithLogitsLoss`` and
``BCELoss`` take float targets of the output's shape (the multi-label form). The data check sees the
loss only when ``torchdoctor_data()`` returns it (``"loss"`` or ``"criterion"``): then the forms
that raise, or that train on nonsense, are errors; otherwise one-hot labels are a note, an
information-level fact (many training loops take ``y.argmax(1)`` themselves).
"""

from __future__ import annotations

import inspect
from typing import Any, Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .context import Context, Split
from .spell import nums

# torch.nn's losses and their functional forms whose target form is known; a subclass of one
# (its forward may convert the target) counts as unknown
INDEX_LOSSES = ("CrossEntropyLoss", "NLLLoss")
BINARY_LOSSES = ("BCEWithLogitsLoss", "BCELoss")
FUNCTIONAL = {
    "cross_entropy": "CrossEntropyLoss",
    "nll_loss": "NLLLoss",
    "binary_cross_entropy_with_logits": "BCEWithLogitsLoss",
    "binary_cross_entropy": "BCELoss",
}

# losses that take real-valued targets: integer targets given to them (ages, counts, ratings) are
# numbers, not class ids, so labels.py makes no class findings (kept apart from ``loss_name``, which
# names the losses whose target form this module checks)
REGRESSION_LOSSES = ("L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss")
_REGRESSION_FUNCTIONAL = {
    "l1_loss": "L1Loss",
    "mse_loss": "MSELoss",
    "smooth_l1_loss": "SmoothL1Loss",
    "huber_loss": "HuberLoss",
}

_NEXT_INDEX = (
    "Next step: give the loss the class index: y.argmax(1) on each batch, or return the index "
    "(an int64 scalar) from __getitem__ instead of the one-hot row"
)


def loss_name(loss: Any) -> Optional[str]:
    """The name of a torch loss this check knows (an instance, the class, or torch.nn.functional's
    function), else None."""
    if loss is None or _is_function(loss):
        return _functional(loss, FUNCTIONAL)
    cls = loss if inspect.isclass(loss) else type(loss)
    known = INDEX_LOSSES + BINARY_LOSSES
    return cls.__name__ if cls.__name__ in known and cls.__module__.startswith("torch.nn") else None


def regression_loss(loss: Any) -> Optional[str]:
    """The name of torch's regression loss (an instance, the class, or the functional form), else None;
    a subclass counts too: it still takes real-valued targets."""
    if loss is None or _is_function(loss):
        return _functional(loss, _REGRESSION_FUNCTIONAL)
    cls = loss if inspect.isclass(loss) else type(loss)
    return next((c.__name__ for c in cls.__mro__ if c.__name__ in REGRESSION_LOSSES), None)


def check(ctx: Context) -> list:
    out = []
    for split in ctx.splits:
        s = split.stats
        if s.label_kind == "onehot" and s.labels is not None:
            found = _onehot(ctx, split)
            if found is None:
                ctx.notes.append(_onehot_note(ctx, split))
            else:
                out.append(found)
        elif s.label_kind in ("index", "float") and s.labels is not None and ctx.loss in BINARY_LOSSES:
            out += _indices_for_binary(ctx, split)
        elif s.label_kind == "multi" and not s.label_float and ctx.loss in BINARY_LOSSES:
            out.append(_integer_multi_hot(ctx, split))
    return out


def _integer_multi_hot(ctx: Context, split: Split) -> dict:
    """Multi-hot rows (several 0/1 per row: multi-label targets) of an integer or bool dtype for a BCE
    loss, which computes in the logits' float dtype and raises on any other target dtype."""
    s = split.stats
    dtype = split.draws.y_dtype or "integers"
    return F.finding(
        F.ONEHOT_LABELS,
        F.ERRORS,
        split.name,
        f"{split.name} labels are multi-hot rows of width {s.label_shape[0] if s.label_shape else '?'} ({dtype}) and "
        f"the loss is {ctx.loss}, which needs floating-point targets: it raises on them (BCEWithLogitsLoss: "
        '"result type Float can\'t be cast to the desired output type Long"; BCELoss: "Found dtype Long but '
        'expected Float"). Likely cause: the 0/1 targets were built as integers (torch.zeros(..., dtype=torch.long), '
        "a numpy int array, MultiLabelBinarizer). Next step: return them as float32 from __getitem__ "
        "(torch.tensor(y, dtype=torch.float32)), or .float() the batch's targets before the loss.",
        source=split.source,
        loss=ctx.loss,
        width=int(s.label_shape[0]) if s.label_shape else None,
        dtype=split.draws.y_dtype,
    )


def _form(split: Split) -> str:
    s = split.stats
    return (
        f"one-hot rows of width {s.label_width} ({split.draws.y_dtype or 'numbers'}, exactly one 1 in each of "
        f"the {len(s.labels) if s.labels is not None else 0} sampled labels)"
    )


def _onehot(ctx: Context, split: Split) -> Optional[dict]:
    """An error when the known loss raises on these one-hot rows, else None."""
    s, loss = split.stats, ctx.loss
    if loss == "NLLLoss":
        raises = '"0D or 1D target tensor expected, multi-target not supported"'
        why = "NLLLoss takes class indices of shape (N,) only"
    elif loss == "CrossEntropyLoss" and not s.label_float:
        raises = '"Expected floating point type for target with class probabilities, got Long"'
        why = (
            "CrossEntropyLoss reads a target of the output's shape (N, C) as class probabilities, which must "
            "be floating point"
        )
    elif loss in BINARY_LOSSES and not s.label_float:
        raises = '"result type Float can\'t be cast to the desired output type Long"'
        why = f"{loss} needs floating-point targets"
    else:
        return None
    tail = {
        "CrossEntropyLoss": " (or .float() the rows: CrossEntropyLoss then takes them as class probabilities).",
        "NLLLoss": ".",
    }
    fix = _NEXT_INDEX + tail.get(loss, " and use CrossEntropyLoss; or .float() the rows to keep the binary loss.")
    return F.finding(
        F.ONEHOT_LABELS,
        F.ERRORS,
        split.name,
        f"{split.name} labels are {_form(split)} and the loss is {loss}: {why}, so it raises {raises}. Likely "
        f"cause: labels one-hot encoded (F.one_hot, Keras' to_categorical) for a loss that wants the index. {fix}",
        source=split.source,
        loss=loss,
        width=s.label_width,
        dtype=split.draws.y_dtype,
    )


def _onehot_note(ctx: Context, split: Split) -> str:
    s = split.stats
    head = f"{split.name}: labels are {_form(split)}; the label checks count each row's 1 as its class."
    if ctx.loss == "CrossEntropyLoss":
        return head + " CrossEntropyLoss takes float one-hot rows as class probabilities (torch >= 1.10): valid."
    if ctx.loss in BINARY_LOSSES:
        return head + (
            f" {ctx.loss} takes float rows of the output's shape (the multi-label form): valid; with one class "
            "per sample, CrossEntropyLoss on the class index is the usual loss."
        )
    kind = "float" if s.label_float else "integer"
    return head + (
        f' The loss is not known to the check (return it as "loss" from torchdoctor_data() to check them against '
        f"it). For {kind} one-hot rows: nn.CrossEntropyLoss takes class indices of shape (N,) or float class "
        "probabilities of shape (N, C) (torch >= 1.10)"
        + (", so it raises on integer rows" if not s.label_float else ", so float one-hot rows are valid for it")
        + "; NLLLoss takes indices only; BCEWithLogitsLoss takes float rows (multi-label); a loop that calls "
        "y.argmax(1) before the loss is fine."
    )


def _indices_for_binary(ctx: Context, split: Split) -> list:
    """Class indices with more than two values for a binary loss: it raises against a (N, K) output
    and trains on targets above 1 against a single one."""
    s = split.stats
    assert s.labels is not None
    y = s.labels[np.isfinite(s.labels)]
    values = np.unique(y[y != T.IGNORE_INDEX])
    if len(values) <= 2 or not np.all(values == np.round(values)):
        return []  # 0/1 targets (the binary form), or soft targets
    return [
        F.finding(
            F.INDEX_LABELS,
            F.ERRORS,
            split.name,
            f"{split.name} labels are class indices taking {len(values)} values {nums(values[:10])} and the "
            f"loss is {ctx.loss}, which wants targets in [0, 1] of the output's shape: against an (N, K) output "
            'it raises "Target size ... must be the same as input size", against one output it trains on '
            "targets above 1 without an error. Likely cause: a binary loss for a multi-class task. Next step: "
            "CrossEntropyLoss with these indices and one output per class; or, for multi-label targets, "
            "F.one_hot(y, num_classes).float().",
            source=split.source,
            loss=ctx.loss,
            classes=int(len(values)),
        )
    ]


def _is_function(loss: Any) -> bool:
    return inspect.isfunction(loss) or inspect.isbuiltin(loss)


def _functional(loss: Any, names: dict) -> Optional[str]:
    """The loss a torch functional (``F.cross_entropy``, ``F.l1_loss``) computes, by ``names``; None
    for None or a function from elsewhere."""
    if loss is None:
        return None
    module = getattr(loss, "__module__", "") or ""
    return names.get(loss.__name__) if module.startswith("torch") else None
