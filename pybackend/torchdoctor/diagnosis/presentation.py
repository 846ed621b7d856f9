"""What the two views count, fold and say beside the data, so the extension only draws.

The view models of ``gradient_flow.build`` and ``shape_trace.build`` get their last fields here:

- gradient flow: ``counts`` ``{rows, flagged, error, warning, info}`` (rows by their most severe
  flag), ``verdictCounts`` ``{error, warning, info}`` (the chips over the verdicts) and, per
  row, ``fold``: the flags written out under the row. A run of consecutive rows flagged by the
  same rule with the same next step (40 layers with vanishing gradients) writes its sentence
  once, under its first row: ``{"flag": index into the row's flags, "repeats": how many rows
  below share it}``; the rows below list only their icon.
- shape trace: ``counts`` ``{modules, changes, flagged}`` and ``uniform``: "All tensors float32
  on cpu." when no call changes dtype or device and the summary does not say so already.

Row flags and verdicts arrive most severe first (``rules.by_severity``); nothing here reorders.
Pure functions on the JSON-ready dicts (no torch), so stored view models can be finished too.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

SEVERITIES = ("error", "warning", "info")
_RANK = {s: i for i, s in enumerate(SEVERITIES)}


def _worst(flags: Sequence[Dict[str, Any]]) -> str:
    """The most severe flag's severity; an unknown one reads as a warning (as the view draws it)."""
    severities = [str(f["severity"]) if f.get("severity") in _RANK else "warning" for f in flags]
    return min(severities, key=lambda s: _RANK[s])


def _flag_key(flag: Dict[str, Any]) -> str:
    """Flags fold when they say the same thing: severity, rule and the same next step."""
    return "\0".join(
        (str(flag.get("severity", "")), str(flag.get("rule", "")), str(flag.get("suggestion", "")).strip())
    )


def fold_repeated(flag_lists: Sequence[Sequence[Dict[str, Any]]]) -> List[List[Dict[str, int]]]:
    """Per row, the flags written under it: ``[{"flag": i, "repeats": n}]``.

    A flag whose rule and next step also flagged the row above is not repeated (that row's
    entry counts it in ``repeats``). Flags without a rule are never folded.
    """
    keys = [[_flag_key(f) for f in flags] for flags in flag_lists]
    out: List[List[Dict[str, int]]] = []
    for i, flags in enumerate(flag_lists):
        above = set(keys[i - 1]) if i > 0 else set()
        details: List[Dict[str, int]] = []
        for j, flag in enumerate(flags):
            key = keys[i][j]
            if flag.get("rule") and key in above:
                continue
            repeats = 0
            while flag.get("rule") and i + repeats + 1 < len(flag_lists) and key in keys[i + repeats + 1]:
                repeats += 1
            details.append({"flag": j, "repeats": repeats})
        out.append(details)
    return out


def gradient_counts(rows: Sequence[Dict[str, Any]]) -> Dict[str, int]:
    """Rows, flagged rows, and flagged rows by their most severe flag."""
    counts = {"rows": len(rows), "flagged": 0, "error": 0, "warning": 0, "info": 0}
    for row in rows:
        flags = [f for f in row.get("flags") or [] if str(f.get("sentence", "")).strip()]
        if flags:
            counts["flagged"] += 1
            counts[_worst(flags)] += 1
    return counts


def verdict_counts(verdicts: Sequence[Dict[str, Any]]) -> Dict[str, int]:
    """The verdicts (with a sentence) by severity; an unknown one reads as a warning."""
    counts = {s: 0 for s in SEVERITIES}
    for v in verdicts:
        if str(v.get("sentence", "")).strip():
            counts[_worst([v])] += 1
    return counts


def finish_gradient_flow(model: Dict[str, Any]) -> Dict[str, Any]:
    """Add ``counts``, ``verdictCounts`` and each row's ``fold`` (in place; returned for chaining)."""
    rows = model.get("rows") or []
    folds = fold_repeated([r.get("flags") or [] for r in rows])
    for i, row in enumerate(rows):  # no zip(strict=...): the backend runs on Python 3.9
        row["fold"] = folds[i]
    model["counts"] = gradient_counts(rows)
    model["verdictCounts"] = verdict_counts(model.get("verdicts") or [])
    return model


def _dtype(name: Any) -> str:
    text = str(name or "")
    return text[len("torch.") :] if text.startswith("torch.") else text


def shape_counts(rows: Sequence[Dict[str, Any]]) -> Dict[str, int]:
    """Module calls, calls that change dtype or device, calls with activation flags."""
    return {
        "modules": len(rows),
        "changes": sum(1 for r in rows if r.get("dtypeChange") or r.get("deviceChange")),
        "flagged": sum(1 for r in rows if r.get("flags")),
    }


def uniform_note(model: Dict[str, Any]) -> str:
    """ "All tensors float32 on cpu." when nothing changes and the summary is not already saying it.

    Under a failure the view hides the summary, so the note is said there in any case.
    """
    rows = model.get("rows") or []
    metas = [m for r in rows for m in list(r.get("inputs") or []) + list(r.get("outputs") or [])]
    dtypes = {_dtype(m.get("dtype")) for m in metas if m.get("dtype")}
    devices = {m.get("device") for m in metas if m.get("device")}
    if shape_counts(rows)["changes"] or len(dtypes) != 1 or len(devices) != 1:
        return ""
    failure = bool(model.get("error")) or any(r.get("failed") for r in rows)
    if not failure and "all tensors" in str(model.get("summary") or "").lower():
        return ""
    return f"All tensors {next(iter(dtypes))} on {next(iter(devices))}."


def finish_shape_trace(model: Dict[str, Any]) -> Dict[str, Any]:
    """Add ``counts`` and ``uniform`` (in place; returned for chaining)."""
    model["counts"] = shape_counts(model.get("rows") or [])
    model["uniform"] = uniform_note(model)
    return model
