"""Run every data check on the splits and build the result (worker side)."""

from __future__ import annotations

import time
import traceback
from typing import Any, Callable, Optional

from . import drift, duplicates, labels, layout, normalisation, sequences, tabular, values
from . import findings as F
from . import thresholds as T
from .context import Context, Split, classes_of, source_of
from .model_info import inspect_model
from .reduce import SplitStats, reduce
from .sampling import Draws, draw
from .tables import find_table, from_object

CHECKS = (
    ("values", values.check),
    ("normalisation", normalisation.check),
    ("layout", layout.check),
    ("labels", labels.check),
    ("duplicates", duplicates.check),
    ("drift", drift.check),
    ("tabular", tabular.check),
    ("sequences", sequences.check),
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
) -> Context:
    options = options or {}
    max_samples = int(options.get("maxSamples", T.MAX_SAMPLES))
    max_batches = int(options.get("maxBatches", T.MAX_BATCHES))
    gallery = int(options.get("galleryImages", T.GALLERY_IMAGES))
    ctx = Context([], inspect_model(model) if model is not None else None, max_samples=max_samples)
    for n, (name, obj) in enumerate(splits.items()):
        progress(n / max(1, len(splits)) * 0.8, f"drawing {name}")
        table = from_object(obj, name)
        if table is not None:
            d = Draws(name, "table", obj, length=table.rows)
            ctx.splits.append(Split(name, d, SplitStats(name), source_of(obj) or origin, None, table))
            continue
        d = draw(name, obj, max_samples, max_batches, gallery)
        ctx.notes += d.notes
        split = Split(name, d, reduce(d), source_of(obj) or origin, classes_of(obj), find_table(obj, name))
        if split.stats.other_shapes:
            ctx.notes.append(
                f"{name}: {split.stats.other_shapes} samples of other shapes than {list(split.stats.shape)} "
                "were left out of the statistics"
            )
        if d.indices and not d.numeric:
            ctx.notes.append(f"{name}: the features ({d.how}) are not numeric arrays: not checked")
        ctx.splits.append(split)
    if ctx.model is not None:
        ctx.notes.append(ctx.model.describe())
    return ctx


def run(
    splits: dict,
    model: Any = None,
    options: Optional[dict] = None,
    progress: Progress = _nothing,
    target: str = "",
    file: str = "",
    origin: Optional[dict] = None,
) -> dict:
    started = time.perf_counter()
    result = F.new_result(target, file)
    ctx = build_context(splits, model, options, progress, origin)
    for n, (name, check) in enumerate(CHECKS):
        progress(0.8 + 0.2 * n / len(CHECKS), f"checking {name}")
        try:
            result["findings"] += check(ctx)
        except Exception as exc:  # noqa: BLE001 - one check's bug must not hide the others' findings
            result["notes"].append(f"the {name} check could not run: {type(exc).__name__}: {exc}")
            result["notes"].append(traceback.format_exc(limit=3))
    result["notes"] = ctx.notes + result["notes"]
    result["splits"] = [summary(s) for s in ctx.splits]
    result["durationSeconds"] = round(time.perf_counter() - started, 3)
    return F.conclude(result)


def _floats(values: Any) -> Optional[list]:
    return None if values is None else [float(v) for v in values][:16]


def summary(split: Split) -> dict:
    s, d = split.stats, split.draws
    return {
        "name": split.name,
        "kind": d.kind,
        "length": d.length,
        "sampled": s.sampled if d.kind != "table" else d.length or 0,
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

    def label_of(index: Any) -> Optional[str]:
        if index not in found:
            return None
        value = float(found[index])
        if s.label_kind in ("index", "onehot") and value == int(value):
            return labels.label_name(split, int(value))
        return f"{value:.4g}"

    return kept.to_json(label_of, s.shape)
