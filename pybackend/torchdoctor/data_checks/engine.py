"""Run every data check on the splits and build the result (worker side)."""

from __future__ import annotations

import functools
import time
import traceback
from typing import Any, Callable, Optional

from . import (
    budget,
    drift,
    duplicates,
    label_form,
    labels,
    layout,
    normalisation,
    orientation,
    sequences,
    shuffling,
    stuck,
    tabular,
    temporal,
    values,
)
from . import findings as F
from . import thresholds as T
from .arrays import BoxLabels
from .context import Context, Split, classes_of, source_of
from .gallery import box_caption
from .model_info import inspect_model
from .raw_rows import has_raw_rows
from .reduce import SplitStats, reduce
from .sampling import Draws, is_loader
from .tables import find_table, from_object

CHECKS = (
    ("values", values.check),
    ("normalisation", normalisation.check),
    ("layout", layout.check),
    ("orientation", orientation.check),
    ("labels", labels.check),
    ("label form", label_form.check),
    ("duplicates", duplicates.check),
    ("drift", drift.check),
    ("tabular", tabular.check),
    ("temporal", temporal.check),
    ("sequences", sequences.check),
    ("shuffling", shuffling.check),
)

Progress = Callable[[float, str], None]


def _nothing(fraction: float, message: str) -> None:
    pass


def build_context(
    splits: dict,
    model: Any = None,
    options: Optional[dict] = None,
    progress: Progress = _nothing,
    origin: Optional[dict] = None,
    loss: Any = None,
) -> Context:
    options = options or {}
    max_samples = int(options.get("maxSamples", T.MAX_SAMPLES))
    max_batches = int(options.get("maxBatches", T.MAX_BATCHES))
    gallery = int(options.get("galleryImages", T.GALLERY_IMAGES))
    ctx = Context([], inspect_model(model) if model is not None else None, max_samples=max_samples)
    ctx.loss = label_form.loss_name(loss)
    ctx.origin = origin
    ctx.regression = label_form.regression_loss(loss)
    ignore = getattr(loss, "ignore_index", None)
    ctx.ignore_index = ignore if isinstance(ignore, int) and not isinstance(ignore, bool) else None
    tables = {name: from_object(obj, name) for name, obj in splits.items()}
    # duplicates compare the stored rows when every drawn split keeps them: no digests of the draws then
    raw = all(has_raw_rows(o.dataset if is_loader(o) else o) for n, o in splits.items() if tables[n] is None)
    left = sum(t is None for t in tables.values())  # splits to draw, for the budget's fair shares
    for n, (name, obj) in enumerate(splits.items()):
        progress(n / max(1, len(splits)) * 0.8, f"drawing {name}")
        table = tables[name]
        if table is not None:
            d = Draws(name, "table", obj, length=table.rows)
            ctx.splits.append(Split(name, d, SplitStats(name), source_of(obj) or origin, None, table))
            continue
        if budget.stuck():  # a draw that never returned: no more of the user's code is called
            ctx.not_drawn.append(name)
            continue
        rest = list(splits)[n + 1 :]
        with budget.split(left):
            d = stuck.draw_bounded(
                name,
                obj,
                max_samples,
                max_batches,
                gallery,
                raw,
                then=functools.partial(_given_up, ctx, name, obj, origin=origin, rest=rest),
            )
        left -= 1
        ctx.notes += d.notes
        if not d.indices and stuck.gave_up_on(name):  # its first call never returned: the stuck finding
            continue  # says so; "empty" and the per-split checks would be false about it
        split = Split(name, d, reduce(d), source_of(obj) or origin, classes_of(obj), find_table(obj, name))
        ctx.notes += _coverage_notes(split)
        if d.indices and not d.numeric:
            ctx.notes.append(f"{name}: the features ({d.how}) are not numeric arrays: not checked")
        ctx.splits.append(split)
    if ctx.model is not None:
        ctx.notes.append(ctx.model.describe())
    return ctx


def _coverage_notes(split: Split) -> list:
    """What the statistics cover when it is not every sample drawn (other shapes than the first
    sample's: statistics are over the samples of that one shape), and what labels were counted."""
    s, d = split.stats, split.draws
    notes = []
    drawn = len(d.indices)
    if s.other_shapes and drawn:
        why = (
            "the loader's batches differ in size, as a collate that pads each batch to its largest sample "
            "makes them (the statistics are of the batches as the model gets them, padding included)"
            if d.kind == "loader"
            else "the samples differ in size"
        )
        notes.append(
            f"{split.name}: statistics (value ranges, means, blank samples, duplicates, drift) over {s.sampled} "
            f"of {drawn} samples drawn, those of the most common shape {list(s.shape)}; the other "
            f"{s.other_shapes} have other shapes: {why}"
            + (". The label checks use every labelled sample" if s.label_kind not in (None, "boxes") else "")
            + (", the token-id and duplicate checks every sequence" if s.ragged else "")
        )
    if s.label_kind == "boxes":
        boxes = 0 if s.box_labels is None else len(s.box_labels)
        notes.append(
            f"{split.name}: detection targets: the label histogram counts the class ids of {boxes} boxes in "
            f"{s.box_images} images (one per box, not per image); the label checks for one class per sample "
            "(imbalance and accuracy baseline, labels outside the model's outputs, labels unseen in training) "
            "do not apply to them and were not run"
        )
    return notes


def run(
    splits: dict,
    model: Any = None,
    options: Optional[dict] = None,
    progress: Progress = _nothing,
    target: str = "",
    file: str = "",
    origin: Optional[dict] = None,
    loss: Any = None,
) -> dict:
    started = time.perf_counter()
    result = F.new_result(target, file)
    stuck.reset()
    with budget.limited((options or {}).get("budgetSeconds")):
        _live.update(result=result, started=started, progress=progress)
        ctx = build_context(splits, model, options, progress, origin, loss)
        _check_all(ctx, result, progress)
    return _close(ctx, result, started)


_live: dict = {}  # the running check's result, start and progress: for _given_up, in a watchdog thread


def _given_up(ctx: Context, name: str, obj: Any, d: Draws, origin: Optional[dict], rest: list) -> dict:
    """The data-check worker's watchdog gave up on ``name``'s draw (stuck.py, its main thread is
    stuck): the check is finished here on what was drawn, and the other splits are not drawn."""
    if d.indices:
        ctx.notes += d.notes
        ctx.splits.append(Split(name, d, reduce(d), source_of(obj) or origin, classes_of(obj), find_table(obj, name)))
    ctx.not_drawn += [r for r in rest if r not in {s.name for s in ctx.splits}]
    _check_all(ctx, _live["result"], _live["progress"])
    return _close(ctx, _live["result"], _live["started"])


def _check_all(ctx: Context, result: dict, progress: Progress) -> None:
    for n, (name, check) in enumerate(CHECKS):
        progress(0.8 + 0.2 * n / len(CHECKS), f"checking {name}")
        try:
            result["findings"] += check(ctx)
        except Exception as exc:  # noqa: BLE001 - one check's bug must not hide the others' findings
            result["notes"].append(f"the {name} check could not run: {type(exc).__name__}: {exc}")
            result["notes"].append(traceback.format_exc(limit=3))
    result["findings"] += stuck.findings(ctx.splits, ctx.not_drawn)  # in the draws or in a check's redraws
    result["notes"] = _budget_notes(ctx) + ctx.notes + result["notes"]
    if budget.active():
        result["budget"] = {"seconds": budget.seconds(), "reached": bool(budget.reached())}


def _close(ctx: Context, result: dict, started: float) -> dict:
    result["splits"] = [summary(s) for s in ctx.splits]
    result["durationSeconds"] = round(time.perf_counter() - started, 3)
    return F.conclude(result)


def _budget_notes(ctx: Context) -> list:
    """What the time budget cut short (a check inside a paused program), and how to check more."""
    cut = budget.reached()
    if not cut:
        return []
    looked = ", ".join(f"{s.name} {len(s.draws.indices)} of {s.draws.length or '?'}" for s in ctx.splits)
    return [
        f"time budget of {budget.seconds():g} s reached: samples looked at: {looked} ({'; '.join(cut)}). "
        "The findings are about those samples only. To check more, run the check from a terminal, where "
        "it has no budget (a worker process with a time limit, --timeout): torchdoctor check data FILE:NAME"
    ]


def _floats(values: Any) -> Optional[list]:
    return None if values is None else [float(v) for v in values][:16]


def summary(split: Split) -> dict:
    s, d = split.stats, split.draws
    return {
        "name": split.name,
        "kind": d.kind,
        "length": d.length,
        "sampled": len(d.indices) if d.kind != "table" else d.length or 0,  # samples drawn
        "statsSampled": s.sampled if d.kind != "table" else d.length or 0,  # those the statistics cover
        "otherShapes": s.other_shapes,
        "layout": s.layout,
        "shape": list(s.shape),
        "batchShape": list(d.batch_shape) if d.batch_shape else None,
        "dtype": d.x_dtype,
        "labelDtype": d.y_dtype,
        "found": d.how,
        "random": d.random,
        "channelMean": _floats(s.ch_mean),
        "channelStd": _floats(s.ch_std),
        "min": s.vmin if s.sampled else None,
        "max": s.vmax if s.sampled else None,
        "labels": labels.histogram(split),
        "labelKind": s.label_kind,
        "boxImages": s.box_images if s.label_kind == "boxes" else None,
        "columns": len(split.table.columns) if split.table is not None else None,
        "source": split.source,
        "seconds": round(d.seconds, 3),
        "gallery": _gallery(split),
    }


def _gallery(split: Split) -> Optional[dict]:
    """The split's kept images with the label under each (``gallery.py``), or None."""
    reducer = split.draws.reducer
    kept = getattr(reducer, "gallery", None)
    if kept is None:
        return None
    s = split.stats
    found = dict(zip(s.label_indices, s.labels)) if s.labels is not None and s.label_kind != "multi" else {}
    d = split.draws
    boxes = {i: y.ids for i, y in zip(d.indices, d.ys) if isinstance(y, BoxLabels)} if s.label_kind == "boxes" else {}

    def label_of(index: Any) -> Optional[str]:
        if index in boxes:  # detection targets: the box count and class ids
            return box_caption(boxes[index])
        if index not in found:
            return None
        value = float(found[index])
        if s.label_kind in ("index", "onehot") and value == int(value):
            return labels.label_name(split, int(value))
        return f"{value:.4g}"

    out = kept.to_json(label_of, s.shape)
    if out is not None:
        out["drawn"] = len(split.draws.indices)  # every sample drawn, those of other shapes too (the grid's caption)
    return out
