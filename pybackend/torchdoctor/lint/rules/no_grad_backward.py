"""TD013: ``loss.backward()`` inside ``torch.no_grad()`` / ``torch.inference_mode()``.

Code in a no-grad block records no autograd graph. A loss computed there has nothing to
backpropagate through (it fails, or, when part of it came from outside, only that part
learns); a ``backward()`` placed there is almost always a training step pasted into an
evaluation block.
"""

from __future__ import annotations

import ast
from typing import Optional

from .. import torchapi
from ..context import LintContext
from ..model import ERROR
from ..registry import Reporter, rule


@rule(
    "TD013",
    "backward-in-no-grad",
    "backward() called inside torch.no_grad() / inference_mode()",
    ERROR,
    """
Inside `with torch.no_grad():` (or `torch.inference_mode()`, or a function decorated with
either) PyTorch records no graph. A loss computed there cannot be backpropagated: either
`backward()` fails with "element 0 of tensors does not require grad", or, when only part of
the computation happened outside the block, only that part gets gradients and the rest of the
model silently stops learning. Move the forward pass, the loss and `backward()` out of the
no-grad block; keep only evaluation inside it.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call in ctx.calls:
        if not torchapi.is_backward(ctx, call):
            continue
        if torchapi.grad_mode_at(ctx, call) != torchapi.NO_GRAD:
            continue
        block = _no_grad_block(ctx, call)
        where = f" (line {block.lineno})" if block is not None else ""
        report.report(
            call,
            f"`{ctx.text(call)}` runs with gradients disabled{where}: the computation in that block records no "
            f"graph, so nothing computed there gets gradients. Move the training step out of the no-grad block.",
        )


def _no_grad_block(ctx: LintContext, node: ast.AST) -> Optional[ast.AST]:
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            if any(torchapi.grad_mode_of(ctx, item.context_expr) == torchapi.NO_GRAD for item in anc.items):
                return anc
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in anc.decorator_list:
                if torchapi.grad_mode_of(ctx, deco) == torchapi.NO_GRAD:
                    return deco
            return None
    return None


