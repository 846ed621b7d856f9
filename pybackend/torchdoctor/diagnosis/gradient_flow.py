"""The gradient-flow view model: one row per parameter in model order, verdicts, a summary.

``build(snapshot, thresholds)`` ->::

    {
      "summary": str,                   # one sentence on top of the view
      "rows": [{                        # model order (the runtime's); empty when there are no gradients
        "name": "fc1.weight", "module": "fc1", "type": "Linear",
        "meanAbs": float | null, "maxAbs": float | null, "norm": float | null,
        "nan": int | true, "inf": int | true,      # counts; true: present, not counted
        "flags": [{"rule", "severity", "sentence", "suggestion"}],   # most severe first
        "fold": [{"flag": int, "repeats": int}],   # the flags written under the row (presentation.py)
        "location": {"file", "line"} | null,
        "shape": [int], "numel": int, "requiresGrad": bool,
        "source": "live" | "backward" | "earlier" | "current" | null,   # see runtime/collect/snapshot.py
        "changed": bool, "note": str | null
      }],
      "verdicts": [{"rule", "severity", "sentence", "suggestion", "module": str | null}],
                                        # most severe first; one per layer, or one per rule when
                                        # more than 3 parameters share it
      "activations": [{                 # leaf module calls, in call order (for a second table)
        "path", "type", "occurrence", "mean", "std", "zeros", "deadUnits", "min", "max", "nonFinite",
        "source", "flags": [...], "location"
      }],
      "thresholds": {"deadFraction": 0.5, ...},
      "counts": {"rows", "flagged", "error", "warning", "info"},  # rows by their most severe flag
      "verdictCounts": {"error", "warning", "info"}               # the verdicts by severity
    }

The bars of the view are drawn on a log scale from ``meanAbs`` and ``maxAbs``.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from . import rules as R
from .blocks import block_paths, gradient_groups
from .presentation import finish_gradient_flow
from .snapshot_data import integer, location, num, obj, objs, text
from .words import layer, mag, names

GROUP_LIMIT = 3  # above this many parameters, one rule is one verdict


def grad_rows(snapshot: Dict[str, Any]) -> List[Tuple[Dict[str, Any], R.GradRow]]:
    out = []
    for p in objs(snapshot.get("parameters")):
        g = obj(p.get("grad"))
        values = obj(p.get("values"))
        has = bool(g)
        nan = max(integer(g.get("nan"), 0), 0) if has else 0
        inf = max(integer(g.get("inf"), 0), 0) if has else 0
        if has and not nan and not inf and (g.get("hasNonFinite") or integer(g.get("nonFinite"), 0) > 0):
            nan = -1
        out.append(
            (
                p,
                R.GradRow(
                    name=text(p.get("name"), "?"),
                    module=text(p.get("module")),
                    module_type=text(p.get("moduleType")),
                    mean_abs=num(g.get("meanAbs")) if has else None,
                    max_abs=num(g.get("maxAbs")) if has else None,
                    norm=num(g.get("norm")) if has else None,
                    nan=nan,
                    inf=inf,
                    has_grad=has,
                    requires_grad=bool(p.get("requiresGrad", True)),
                    changed=bool(p.get("changedSinceBackward")),
                    weights_nonfinite=integer(values.get("nan"), 0) + integer(values.get("inf"), 0) if values else 0,
                ),
            )
        )
    return out


def act_rows(snapshot: Dict[str, Any]) -> List[Tuple[Dict[str, Any], R.ActRow]]:
    """Leaf calls with activation statistics, each with the layer with parameters before it."""
    out = []
    feeder: Optional[Tuple[str, str]] = None
    for c in objs(snapshot.get("calls")):
        path, type_name = text(c.get("path")), text(c.get("type"), "?")
        a = obj(c.get("activation"))
        if c.get("leaf") and a:
            nan = a.get("nan") if isinstance(a.get("nan"), int) else None
            posinf = a.get("posinf") if isinstance(a.get("posinf"), int) else None
            neginf = a.get("neginf") if isinstance(a.get("neginf"), int) else None
            inf = posinf + neginf if posinf is not None and neginf is not None else None
            bad = nan + inf if nan is not None and inf is not None else (integer(a.get("nonFinite"), 0) or 0)
            if not bad and a.get("hasNonFinite"):
                bad = -1
            out.append(
                (
                    c,
                    R.ActRow(
                        path=path,
                        type=type_name,
                        occurrence=integer(c.get("occurrence"), 1),
                        leaf=True,
                        count=integer(a.get("count"), 0),
                        mean=num(a.get("mean")),
                        std=num(a.get("std")),
                        zeros=num(a.get("zeros")),
                        dead_units=num(a.get("deadUnits")),
                        units=integer(a.get("units"), 0) or None,
                        min=num(a.get("min")),
                        max=num(a.get("max")),
                        nonfinite=bad,
                        nan=nan,
                        inf=inf,
                        feeder=feeder,
                    ),
                )
            )
        if c.get("leaf") and integer(c.get("ownParams"), 0) > 0:
            feeder = (path, type_name)
    return out


def build(snapshot: Dict[str, Any], th: R.Thresholds) -> Dict[str, Any]:
    model = obj(snapshot.get("model"))
    model_type = text(model.get("type"), "the model")
    grads = obj(snapshot.get("gradients"))
    params = grad_rows(snapshot)
    acts = act_rows(snapshot)
    rows_flags: Dict[str, List[R.Flag]] = {row.name: [] for _, row in params}
    verdicts: List[R.Flag] = []

    # Activations first: a dead ReLU explains the zero gradients of the layers before it.
    input_stats = obj(snapshot.get("input"))
    clip = R.clip_advice(
        [r for _, r in params],
        [r.name for _, r in params if r.mean_abs is not None and r.mean_abs > th.exploding_gradient],
    )
    act_flags, dead, found = _activation_flags(acts, params, input_stats, clip, th)
    verdicts.extend(found)
    flag = R.input_nonfinite(*_input_counts(input_stats), model_type) if _input_bad(input_stats) else None
    if flag:
        verdicts.append(flag)

    # Gradients (only "missing" needs a backward to have happened: some parameter got one).
    source = text(grads.get("source"), "none")
    show_rows = source != "none" and any(r.has_grad for _, r in params)
    per_param = _parameter_flags(params, acts, act_flags, dead, _Order(snapshot), rows_flags, clip, th, show_rows)
    verdicts.extend(_grouped(per_param))
    flag = R.grad_ratio(_layers(params), th, clip)
    if flag:
        verdicts.append(flag)
        for _, param_row in params:
            if param_row.module == flag.module:
                rows_flags[param_row.name].append(flag)
    # Clipping is said once, by the moment line; gradients zeroed in place are a finding.
    flag = R.grads_changed([r for _, r in params])
    if flag and "zeroed" in flag.sentence:
        verdicts.append(flag)

    rows = [_row(p, row, rows_flags[row.name]) for p, row in params] if show_rows else []
    calls = objs(snapshot.get("calls"))
    blocks = block_paths(calls, [r["name"] for r in rows])
    groups = gradient_groups(rows, blocks, {text(c.get("path")): text(c.get("type")) for c in calls})
    ordered = R.by_severity(verdicts)
    return finish_gradient_flow(
        {
            "summary": _summary(snapshot, model_type, params, ordered, show_rows, grads),
            "moment": moment(rows) if show_rows else None,
            "rows": rows,
            "groups": groups,
            "verdicts": [f.to_json(with_module=True) for f in ordered],
            "activations": [_act(call, row, act_flags.get(i, [])) for i, (call, row) in enumerate(acts)],
            "thresholds": th.to_json(),
        }
    )


def _activation_flags(acts, params, input_stats, clip, th: R.Thresholds):
    """Each activation's flags, the dead ReLUs by the module that feeds them, and all flags found."""
    act_flags: Dict[int, List[R.Flag]] = {}
    dead: Dict[str, Tuple[str, str]] = {}  # feeder module path -> (relu path, relu type)
    found: List[R.Flag] = []
    first_bad = None
    weights_bad = {row.module for _, row in params if row.weights_nonfinite}
    input_bad = _input_bad(input_stats)
    for index, (_call, row) in enumerate(acts):
        flags: List[R.Flag] = []
        flag = R.dead_units(row, th)
        if flag:
            flags.append(flag)
            if row.feeder and row.feeder[0] not in dead:
                dead[row.feeder[0]] = (row.path, row.type)
        else:
            flag = R.collapsed(row, th)
            if flag:
                flags.append(flag)
        flag = R.exploding_activation(row, th)
        if flag:
            flags.append(flag)
        if row.nonfinite and first_bad is None:
            first_bad = index
            flags.append(R.activation_nonfinite(row, input_bad, row.path in weights_bad, clip))
        act_flags[index] = flags
        found.extend(flags)
    return act_flags, dead, found


def _parameter_flags(params, acts, act_flags, dead, order, rows_flags, clip, th: R.Thresholds, show_rows: bool):
    """Each parameter's flags (added to its row's in ``rows_flags``); returns them all, in order."""
    per_param: List[R.Flag] = []
    for _, param_row in params:
        found = [
            R.grad_nonfinite(param_row, clip),
            R.weights_nonfinite(param_row, clip),
            R.grad_exploding(param_row, th, clip),
            R.grad_vanishing(param_row, th, _dead_near(param_row.module, dead, order)),
            R.grad_missing(param_row) if show_rows else None,
        ]
        for f in found:
            if f:
                rows_flags[param_row.name].append(f)
                per_param.append(f)
        if param_row.module in dead:
            relu_flag = next(
                f
                for i, (_, a) in enumerate(acts)
                for f in act_flags[i]
                if f.rule == R.DEAD_UNITS and a.path == dead[param_row.module][0]
            )
            rows_flags[param_row.name].append(
                R.Flag(
                    R.DEAD_UNITS,
                    R.WARNING,
                    f"Feeds {layer(*dead[param_row.module])}, whose units are dead: " + relu_flag.sentence,
                    relu_flag.suggestion,
                    relu_flag.module,
                )
            )
    return per_param


class _Order:
    """The calls of the pass, once: ``(path, type, a leaf with parameters)`` and first positions."""

    def __init__(self, snapshot: Dict[str, Any]) -> None:
        self.calls = [
            (text(c.get("path")), text(c.get("type")), bool(c.get("leaf")) and integer(c.get("ownParams"), 0) > 0)
            for c in objs(snapshot.get("calls"))
        ]
        self.first: Dict[str, int] = {}
        for i, (path, _, _) in enumerate(self.calls):
            self.first.setdefault(path, i)


def _dead_near(module: str, dead: Dict[str, Tuple[str, str]], order: _Order) -> Optional[Tuple[str, str, str]]:
    """A dead ReLU that explains zero gradients in ``module``: ``(path, type, "after" | "before")``.

    After: fed by ``module`` or by a later layer, it passes no gradient back. Before: a dead ReLU
    called before ``module`` with no layer with parameters in between: its zero outputs give
    ``module``'s weights zero gradients.
    """
    start = order.first.get(module)
    if start is None or not dead:
        return None
    if module in dead:
        return dead[module] + ("after",)
    later = [(order.first[f], relu) for f, relu in dead.items() if order.first.get(f, -1) > start]
    if later:
        return min(later)[1] + ("after",)
    relus = {relu[0] for relu in dead.values()}
    for path, type_name, has_params in reversed(order.calls[:start]):
        if path in relus:
            return (path, type_name, "before")
        if has_params:
            break
    return None


def _input_bad(stats: Dict[str, Any]) -> bool:
    if not stats:
        return False
    return bool(
        integer(stats.get("nonFinite"), 0)
        or stats.get("hasNonFinite")
        or integer(stats.get("nan"), 0)
        or integer(stats.get("posinf"), 0)
        or integer(stats.get("neginf"), 0)
    )


def _input_counts(stats: Dict[str, Any]) -> Tuple[int, Optional[int], Optional[int]]:
    nan = stats.get("nan") if isinstance(stats.get("nan"), int) else None
    pos, neg = stats.get("posinf"), stats.get("neginf")
    inf = pos + neg if isinstance(pos, int) and isinstance(neg, int) else None
    total = integer(stats.get("nonFinite"), -1)
    if total < 0:
        total = (nan or 0) + (inf or 0) or -1
    return total, nan, inf


def _layers(params: List[Tuple[Dict[str, Any], R.GradRow]]) -> List[Tuple[str, str, Optional[float]]]:
    """Mean |g| per layer (over its parameters, weighted by size), in model order."""
    layers: Dict[str, List[Any]] = {}
    for p, row in params:
        if not row.has_grad or not row.requires_grad or row.mean_abs is None or row.changed:
            continue
        n = max(integer(p.get("numel"), 1), 1)
        entry = layers.setdefault(row.module, [row.module_type, 0.0, 0])
        entry[1] += row.mean_abs * n
        entry[2] += n
    return [(path, t, total / n if n else None) for path, (t, total, n) in layers.items()]


def _grouped(flags: List[R.Flag]) -> List[R.Flag]:
    """One verdict per layer and rule; one per rule when it names more than GROUP_LIMIT parameters."""
    by_rule: Dict[str, List[R.Flag]] = {}
    for f in flags:
        by_rule.setdefault(f.rule, []).append(f)
    out: List[R.Flag] = []
    for rule, group in by_rule.items():
        modules: List[str] = []
        for f in group:
            if f.module not in modules:
                modules.append(f.module or "")
        if len(group) <= GROUP_LIMIT:
            seen = set()
            for f in group:
                if (f.module, f.rule) in seen:
                    continue
                seen.add((f.module, f.rule))
                out.append(f)
            continue
        first = group[0]
        out.append(
            R.Flag(
                rule,
                first.severity,
                f"{len(group)} parameters in {len(modules)} layers ({names(modules)}): {_rule_words(rule)}. "
                f"First: {first.sentence}",
                first.suggestion,
                first.module,
            )
        )
    return out


def _rule_words(rule: str) -> str:
    return {
        R.GRAD_NONFINITE: "NaN/Inf gradients",
        R.GRAD_EXPLODING: "exploding gradients",
        R.GRAD_VANISHING: "vanishing gradients",
        R.GRAD_MISSING: "no gradient from the last backward",
        R.WEIGHTS_NONFINITE: "NaN/Inf weights",
    }.get(rule, rule)


def _row(p: Dict[str, Any], row: R.GradRow, flags: List[R.Flag]) -> Dict[str, Any]:
    g = obj(p.get("grad"))
    return {
        "name": row.name,
        "module": row.module,
        "type": row.module_type,
        "meanAbs": row.mean_abs,
        "maxAbs": row.max_abs,
        "norm": row.norm,
        "nan": True if row.nan < 0 else row.nan,
        "inf": True if row.inf < 0 else row.inf,
        "flags": [f.to_json() for f in R.by_severity(flags)],
        "location": location(p.get("location")),
        "shape": p.get("shape") if isinstance(p.get("shape"), list) else [],
        "numel": integer(p.get("numel"), 0),
        "requiresGrad": row.requires_grad,
        "source": text(g.get("source")) or None,
        "changed": row.changed,
        "note": text(p.get("gradNote")) or None,
    }


def moment(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """When the rows' values are from, in words: ``{"when": "pause" | "backward" | "mixed",
    "changed": int, "text": str}``. The pause is what ``optimizer.step()`` uses (after the
    program's clipping when paused after it); ``backward`` is what the backward left, before
    any clipping (the gradients were freed since)."""
    live = [r for r in rows if r["source"] in ("live", "current")]
    old = [r for r in rows if r["source"] in ("backward", "earlier")]
    changed = sum(1 for r in live if r["changed"])
    if old and not live:
        when, words = "backward", "Values as the backward left them, before any clipping (`.grad` was freed since)."
    elif old:
        when = "mixed"
        words = f"Values at the pause; {len(old)} gradients freed since the backward show what it left, before any clipping."
    elif changed == len(rows):
        when, words = "pause", "Values at the pause, after your clipping (what `optimizer.step()` uses)."
    elif changed:
        when = "pause"
        words = f"Values at the pause (what `optimizer.step()` uses); {changed} changed in place since the backward."
    else:
        when, words = "pause", "Values at the pause, as the backward left them."
    return {"when": when, "changed": changed, "text": words}


def _act(call: Dict[str, Any], row: R.ActRow, flags: List[R.Flag]) -> Dict[str, Any]:
    a = obj(call.get("activation"))
    return {
        "path": row.path,
        "type": row.type,
        "occurrence": row.occurrence,
        "mean": row.mean,
        "std": row.std,
        "zeros": row.zeros,
        "deadUnits": row.dead_units,
        "min": row.min,
        "max": row.max,
        "nonFinite": True if row.nonfinite < 0 else row.nonfinite,
        "source": text(a.get("source")) or None,
        "fromPass": a.get("fromPass") if isinstance(a.get("fromPass"), int) else None,
        "flags": [f.to_json() for f in R.by_severity(flags)],
        "location": location(call.get("location")),
    }


def _summary(snapshot, model_type, params, verdicts, show_rows, grads) -> str:
    if not show_rows:
        if not params:
            return f"{model_type} has no parameters: there is no gradient to show."
        return f"No gradients yet for {model_type}: pause after `loss.backward()` to see them."
    with_grad = [r for _, r in params if r.mean_abs is not None]
    after = ""
    number = grads.get("backwardNumber")
    if isinstance(number, int):
        after = f" after backward {number}"
    if not grads.get("latestPass") and text(grads.get("source")) == "backward":
        after += " (of an earlier forward)"
    problems = [v for v in verdicts if v.severity != R.INFO]
    if problems:
        errors = sum(1 for v in problems if v.severity == R.ERROR)
        counts = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        if errors:
            counts += f" ({errors} NaN/Inf)"
        return f"{model_type}{after}: {counts}. {problems[0].sentence}"
    if not with_grad:
        return f"{model_type}{after}: gradients are present but could not be measured."
    low = min(with_grad, key=lambda r: r.mean_abs)
    high = max(with_grad, key=lambda r: r.mean_abs)
    norms = [r.norm for r in with_grad if r.norm is not None]
    total = f", total norm {mag(math.sqrt(sum(n * n for n in norms)))}" if norms else ""
    return (
        f"{model_type}{after}: no gradient problems in {len(params)} parameters; mean |g| from "
        f"{mag(low.mean_abs)} (`{low.name}`) to {mag(high.mean_abs)} (`{high.name}`){total}."
    )
