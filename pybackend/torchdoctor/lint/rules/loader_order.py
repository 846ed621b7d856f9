"""TD017's sentence, and how sure it is: a training loader that does not shuffle, read in its
stored order, or in an order drawn once before the run.

A dataset shuffled once before it is split (PyTorch Geometric's ``dataset = dataset.shuffle()``,
``torch.utils.data.random_split``) is no longer sorted by class: batches are mixed, but every
epoch repeats the same order. That is worth a word (``shuffle=True`` draws a new order each
epoch), not a warning: said as information (2026-12-07, six graph examples of a fetched project
that shuffle their dataset once, then load it unshuffled)."""

from __future__ import annotations

import ast
import re
from typing import Optional, Tuple

from ..context import LintContext, terminal_name
from ..model import INFORMATION

_ACCELERATOR = re.compile(r"cuda|accel|gpu|device|mps|xpu", re.IGNORECASE)
_ONCE = frozenset({"shuffle", "random_split"})  # calls that draw one random order of a dataset
_DEPTH = 4  # names followed back from the loader's dataset: ``train = ds[n:]``, ``ds = ds.shuffle()``


def message(ctx: LintContext, call: ast.Call, branch: Optional[ast.stmt]) -> Tuple[str, Optional[str]]:
    """The finding's sentence and its severity (None: the rule's own, a warning)."""
    loader = f"`{ctx.text(call.func)}` for the training data"
    if branch is not None:
        return _branch_message(ctx, loader, branch), None
    once = shuffled_once(ctx, call.args[0] if call.args else None)
    if once is not None:
        return (
            f"{loader} does not shuffle (the default is `shuffle=False`): its data was shuffled once "
            f"(line {once.lineno}), so every epoch repeats that same order; `shuffle=True` draws a new one each epoch.",
            INFORMATION,
        )
    return (
        f"{loader} does not shuffle (the default is `shuffle=False`): every epoch sees the samples in stored order.",
        None,
    )


def _branch_message(ctx: LintContext, loader: str, branch: ast.stmt) -> str:
    head = ctx.source.first_line_span(branch)
    header = ctx.source.line(head.start_line)[head.start_col : head.end_col].strip()
    test = getattr(branch, "test", None)
    accelerator = test is not None and _ACCELERATOR.search(ctx.text(test))
    depends = "the accelerator branch" if accelerator else "a branch"
    otherwise = "on the CPU" if accelerator else "when it is not taken"
    return (
        f"{loader} shuffles only under `{header}` (line {branch.lineno}): shuffling depends on {depends}, "
        f"and {otherwise} every epoch sees the samples in stored order (the default is `shuffle=False`)."
    )


def shuffled_once(ctx: LintContext, dataset: Optional[ast.expr]) -> Optional[ast.Call]:
    """The call that shuffled the loader's dataset once (``dataset.shuffle()``, ``random_split``),
    followed through names and slices (``train_dataset = dataset[n:]``), or None."""
    value = dataset
    for _ in range(_DEPTH):
        while isinstance(value, ast.Subscript):
            value = value.value
        if isinstance(value, ast.Call) and terminal_name(value.func) in _ONCE:
            return value
        if not isinstance(value, ast.Name):
            return None
        bound = ctx.binding(value)
        if bound is None:
            return None
        source = bound.source if bound.kind == "unpack" else bound.value
        if isinstance(source, ast.Call) and terminal_name(source.func) in _ONCE:
            return source
        value = source
    return None
