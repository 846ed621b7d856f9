"""TD017's optional samplers: ``sampler=train_sampler`` where ``train_sampler`` is a
``DistributedSampler`` in distributed runs and ``None`` otherwise. The idiom pairs it with
``shuffle=(train_sampler is None)``; without that, a single-process run (``sampler=None``) reads
the training set in stored order every epoch."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ..context import LintContext
from ..fixes import add_keyword
from ..model import Fix

_ORDERING = ("shuffle", "sampler", "batch_sampler")


def sampler_only_sometimes(ctx: LintContext, call: ast.Call) -> Optional[Tuple[str, Optional[Fix]]]:
    """(message, fix) when the loader's only ordering option is ``sampler=name`` and ``name`` is
    ``None`` on some path (``else: train_sampler = None``, ``... if distributed else None``) and a
    sampler built by a call on the others; None otherwise."""
    order = [k for k in call.keywords if k.arg in _ORDERING]
    if len(call.args) >= 3 or len(order) != 1 or order[0].arg != "sampler":
        return None
    name = order[0].value
    if not isinstance(name, ast.Name):
        return None
    values: List[Optional[ast.expr]] = []
    for bound in ctx.alternatives(name):
        value = bound.value
        if isinstance(value, ast.IfExp):
            values += [value.body, value.orelse]
        else:
            values.append(value)
    nones = [v for v in values if isinstance(v, ast.Constant) and v.value is None]
    if not nones or len(nones) == len(values) or not all(isinstance(v, (ast.Call, ast.Constant)) for v in values):
        return None
    message = (
        f"`{ctx.text(call.func)}` for the training data takes `sampler={name.id}`, which is `None` on some paths "
        f"(line {nones[0].lineno}), and does not pass `shuffle`: there every epoch sees the samples in stored order "
        f"(the default is `shuffle=False`)."
    )
    code = f"shuffle=({name.id} is None)"
    return message, add_keyword(ctx.source, call, code, f"Pass `{code}`")
