"""Shape trace: one forward on the example input, a table row per module call.

Each row: module name, type, depth, input shapes -> output shapes, parameter
count, dtype and device of the output. When the forward raises, the table stops
at the module that was running, and the error is said in plain words
(``runtime/collect/shape_errors.py``). A batch dimension that changes on its way to a Linear or
Conv layer (a ``view(-1, N)`` with the wrong N folds features into the batch)
is a warning even when nothing raises.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..runtime.collect.shape_errors import Failure, explain
from . import result as R

TIME_BUDGET = 60.0  # seconds (option timeBudgetSeconds): the sample-mixing probe runs only if it fits
COLUMNS = ["module", "type", "depth", "input", "output", "params", "dtype", "device"]


@dataclass
class Row:
    name: str
    type: str
    depth: int
    inputs: list  # shapes (lists) or type names
    outputs: Any = None
    params: int = 0
    dtype: str = ""
    device: str = ""
    status: str = "running"  # running | ok | error
    kwargs: dict = field(default_factory=dict)  # keyword inputs holding tensors: a Hugging Face **batch

    def input_text(self) -> str:
        """``(8, 3, 32, 32)``; keyword inputs as called: ``input_ids=(8, 12), labels=(8, 8)``."""
        if not self.kwargs:
            return fmt(self.inputs)
        named = [f"{k}={fmt(v)}" for k, v in self.kwargs.items()]
        return ", ".join(([fmt(self.inputs)] if self.inputs else []) + named)

    def cells(self) -> list:
        return [
            self.name or "(model)",
            self.type,
            self.depth,
            self.input_text(),
            fmt(self.outputs) if self.status == "ok" else "—",
            self.params,
            self.dtype,
            self.device,
        ]


@dataclass
class Trace:
    rows: list = field(default_factory=list)
    failure: Failure | None = None
    error_row: int | None = None


def shapes_of(value) -> Any:
    """Shapes of the tensors in a (nested) value; other leaves by type name."""
    import torch

    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (tuple, list)):
        return [shapes_of(v) for v in value]
    if isinstance(value, dict):
        return {k: shapes_of(v) for k, v in value.items()}
    return type(value).__name__


def fmt(shapes) -> str:
    """``(8, 3, 32, 32)``; several tensors side by side, nested ones in brackets."""
    if isinstance(shapes, list) and all(isinstance(d, int) for d in shapes):
        return "(" + ", ".join(str(d) for d in shapes) + ")"
    if isinstance(shapes, list):
        return ", ".join(
            fmt(s) if not (isinstance(s, list) and s and isinstance(s[0], list)) else "[" + fmt(s) + "]" for s in shapes
        )
    if isinstance(shapes, dict):
        return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in shapes.items()) + "}"
    return str(shapes)


def _first_tensor(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    for v in items:
        t = _first_tensor(v)
        if t is not None:
            return t
    return None


def trace(model, inputs: tuple, kwargs: dict | None = None) -> Trace:
    """Run one forward with hooks on every module; never raises for the model's errors."""
    import torch

    result = Trace()
    stack: list[int] = []
    last_done: list[int] = []
    modules = dict(model.named_modules())
    names = {id(m): n for n, m in modules.items()}

    def pre(module, args, kwargs):
        name = names.get(id(module), "?")
        row = Row(name, type(module).__name__, name.count(".") + 1 if name else 0, [shapes_of(a) for a in args])
        row.kwargs = {k: shapes_of(v) for k, v in kwargs.items() if _first_tensor(v) is not None}
        row.params = sum(p.numel() for p in module.parameters())
        stack.append(len(result.rows))
        result.rows.append(row)

    def post(module, args, output):
        index = stack.pop()
        row = result.rows[index]
        row.outputs, row.status = shapes_of(output), "ok"
        t = _first_tensor(output)
        if t is not None:
            row.dtype, row.device = str(t.dtype).replace("torch.", ""), str(t.device)
        last_done.append(index)

    handles = []
    for m in modules.values():
        handles.append(m.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(m.register_forward_hook(post))
    try:
        with torch.no_grad():
            model(*inputs, **(kwargs or {}))
    except Exception as exc:
        result.failure, result.error_row = _failure(exc, model, result, stack, last_done, modules)
    finally:
        for h in handles:
            h.remove()
    return result


def _failure(exc, model, tr: Trace, stack, last_done, modules) -> tuple[Failure, int | None]:
    """The innermost module still running is the one that raised (or whose own code did)."""
    index = stack[-1] if stack else None
    row = tr.rows[index] if index is not None else None
    if row is not None:
        row.status = "error"
    name = row.name if row else ""
    last = tr.rows[last_done[-1]] if last_done else None
    failure = Failure(
        exc=exc,
        module_name=name,
        module=modules.get(name, model),
        input_shapes=row.inputs if row else [],
        last_name=last.name if last else None,
        last_output=last.outputs
        if last and isinstance(last.outputs, list) and last.outputs and isinstance(last.outputs[0], int)
        else None,
    )
    return failure, index


def batch_warnings(tr: Trace, batch: int | None) -> list[str]:
    """The first Linear/Conv whose input's first dimension is not the example's batch, when the model's
    prediction has lost the batch too. A prediction that keeps it, (B, T, V) after a Linear on the
    positions (B*T, E) or a loop over the samples, had the batch undone, not lost; whether the samples
    stay apart is the mixing probe's question."""
    if not batch or _prediction_rows(tr) == batch:
        return []
    for row in tr.rows:
        if row.type not in ("Linear", "Conv1d", "Conv2d", "Conv3d") or not row.inputs:
            continue
        shape = row.inputs[0]
        if not (isinstance(shape, list) and shape and isinstance(shape[0], int)):
            continue
        where = f"before `{row.name}` ({row.type}, input {fmt(shape)})"
        if len(shape) >= 2 and shape[0] != batch:
            return [
                f"The batch dimension changed from {batch} to {shape[0]} {where}: a view(-1, N) or reshape with the "
                "wrong N folds features into the batch (flatten with x.flatten(1) instead), and a reduction over dim 0 "
                "(x.mean(0) where x.mean(1) was meant) takes it away."
            ]
        if len(shape) == 1 and row.type == "Linear" and batch > 1:
            return [
                f"The batch dimension of {batch} samples is gone {where}: a reduction over dim 0 (x.mean(0) or x.sum(0) "
                "where dim 1 was meant) or a view(-1) across the batch made one vector of the whole batch."
            ]
    return []


def _prediction_rows(tr: Trace) -> int | None:
    """The first dimension of what the model predicts with, read from the shapes as ``pick_output`` picks
    the tensor: a dict's ``logits``, else the first tensor that is not a scalar."""
    out = tr.rows[0].outputs if tr.rows else None
    if isinstance(out, dict) and _is_shape(out.get("logits")):
        out = out["logits"]
    for shape in _shapes(out):
        if shape:
            return shape[0]
    return None


def _is_shape(value) -> bool:
    return isinstance(value, list) and all(isinstance(d, int) for d in value)


def _shapes(value):
    """Every tensor shape in a nest of shapes, in order."""
    if _is_shape(value):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _shapes(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _shapes(v)


def explain_forward_failure(model, inputs: tuple, kwargs: dict | None = None) -> str | None:
    """For the other checks: where and why the forward fails, or None when it runs."""
    tr = trace(model, inputs, kwargs)
    return explain(tr.failure) if tr.failure else None


def run(ex, options: dict, report: Callable[[float, str], None], result: dict) -> dict:
    report(0.1, "tracing one forward")
    started = time.monotonic()
    tr = trace(ex.model, ex.inputs, ex.call_kwargs())  # a Hugging Face **batch; nanoGPT's targets=
    forward = time.monotonic() - started
    report(0.9, "forward done" if tr.failure is None else "forward raised")
    batch = ex.batch_size()  # positional or keyword (a Hugging Face **batch) inputs
    result["table"] = {"columns": COLUMNS, "rows": [r.cells() for r in tr.rows], "errorRow": tr.error_row}
    calls = [r for r in tr.rows if r.status == "ok" and r.depth > 0]
    result["details"] = {"modulesCalled": len(tr.rows), "batchSize": batch}
    if tr.failure is not None and _ours(ex, options, result, tr):
        return result
    if tr.failure is not None:
        result["verdict"] = R.FAIL
        result["headline"] = f"The forward of {ex.model.__class__.__name__} raises in " + (
            f"`{tr.failure.module_name}`." if tr.failure.module_name else "its own code."
        )
        result["sentences"] = [
            explain(tr.failure),
            f"{type(tr.failure.exc).__name__}: {str(tr.failure.exc).strip().splitlines()[0] if str(tr.failure.exc).strip() else ''}",
        ]
        result["details"]["exception"] = type(tr.failure.exc).__name__
        result["details"]["failingModule"] = tr.failure.module_name
        return result
    out = tr.rows[0] if tr.rows else None
    report(0.92, "changing one sample: do the others' predictions move?")
    budget = float(options.get("timeBudgetSeconds", TIME_BUDGET))
    warnings = batch_warnings(tr, batch) + _mixing(ex, batch, result["details"], (started + budget, forward))
    result["verdict"] = R.WARN if warnings else R.PASS
    result["headline"] = (
        f"The forward runs: {out.input_text() if out else '?'} -> {fmt(out.outputs) if out else '?'} through {len(calls)} module calls."
    )
    result["sentences"] = warnings
    return result


def _ours(ex, options: dict, result: dict, tr: Trace) -> bool:
    """A Linear that rejects the features of an input size we assumed is a WARN about our guess,
    not a FAIL about the model (the mnist Net at 32x32 is no flatten-size bug)."""
    from .example.infer import assumed_size_failure

    text = assumed_size_failure(ex, options)
    failure = tr.failure
    if text is None or failure is None:
        return False
    result["verdict"] = R.WARN
    result["headline"] = (
        f"The forward of {type(ex.model).__name__} raises in `{failure.module_name}` at an input size Torch Doctor assumed."
    )
    result["sentences"] = [text, f"{type(failure.exc).__name__}: {str(failure.exc).strip().splitlines()[0]}"]
    result["details"]["exception"] = type(failure.exc).__name__
    result["details"]["failingModule"] = failure.module_name
    result["details"]["assumedInput"] = True
    return True


def _mixing(ex, batch: int | None, details: dict, clock: tuple) -> list[str]:
    """The sample-mixing probe (``sample_mixing.py``), skipped when it would not fit before ``clock``'s
    deadline (the time budget; the table is kept either way): its sentences; ``samplesMix`` True/False, or
    None with ``samplesMixNotChecked`` saying why; ``samplesMixNote``: a fact beyond the plain comparison."""
    from . import sample_mixing

    found = sample_mixing.probe(ex, batch, sample_mixing.Clock(*clock))
    details["samplesMix"] = found.mixes if found.checked else None
    if not found.checked:
        details["samplesMixNotChecked"] = found.why_not
    if found.by_design or found.note:
        details["samplesMixNote"] = " ".join(t for t in (found.by_design, found.note) if t)
    place = found.origin or found.before
    details["samplesMixAt"] = place.name if place is not None else None
    return sample_mixing.words.warnings(found, ex)
