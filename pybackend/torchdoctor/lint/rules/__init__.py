"""One module per rule (or small family of rules); importing this package registers them all.

Each rule module holds the ``@rule`` check and the helpers only it uses; what several rules share
lives one level up (``context``, ``torchapi``, ``training``, ``activations``, ``modes``, ``fixes``).
May import: the standard library and ``torchdoctor.lint``'s own modules; never another rule module
(rules stay independent), never torch."""

from __future__ import annotations

from . import (  # noqa: F401 - imported for their registration side effect
    bce_labels,
    dataloader_shuffle,
    device_mismatch,
    dropout_mode,
    eval_mode,
    implicit_none,
    leakage,
    loss_accumulation,
    loss_inputs,
    no_grad_backward,
    sampler_epoch,
    sampler_shuffle,
    shard_metric,
    step_order,
    torch_load,
    train_mode,
    zero_grad,
)
