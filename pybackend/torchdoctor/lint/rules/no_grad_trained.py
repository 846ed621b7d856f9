"""TD013's trained model when the optimizer is not shown: ``def train(net, loader, optimizer,
criterion)`` switches ``net.train()``, runs ``net(im)`` under ``torch.no_grad()``, then
``loss.backward(); optimizer.step()``. What ``optimizer`` steps is not in the file, but the
model the function puts in training mode is the one it trains (2026-12-07: a fetched tutorial's
training helper with its forward pass moved under ``no_grad``, which the rule did not guess at).
A frozen extractor under ``no_grad`` is never switched to training mode there, and a head run
with gradients on its features still keeps the finding away (``no_grad_backward``)."""

from __future__ import annotations

import ast
from typing import List

from ..context import LintContext, receiver
from ..modes import switch_of


def trained_models(ctx: LintContext, backward: ast.Call) -> List[str]:
    """The models ``backward``'s function (or module-level loop) switches to training mode, as
    written (``net``, ``self.model``)."""
    scope = ctx.scope_of(backward)
    found: List[str] = []
    for call in ctx.calls_named("train"):
        if switch_of(call) != "train" or ctx.scope_of(call) is not scope:
            continue
        text = ctx.text(receiver(call))
        if text not in found:
            found.append(text)
    return found
