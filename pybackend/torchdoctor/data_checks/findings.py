"""The data-check result and its findings (pure Python, no numpy or torch).

Shape (JSON)::

    {"check": "data", "title": "Data check", "target": "NAME", "file": "/abs/file.py",
     "verdict": "PASS" | "FINDINGS" | "ERROR", "headline": "...",
     "findings": [{"kind": "blank-samples", "severity": "error" | "warning", "split": "train",
                   "message": "what was seen; the likely cause; the next step",
                   "indices": [17, 40], "count": 2, "source": {"file": ..., "line": 12} | null,
                   "details": {...}}],
     "splits": [{"name": "train", "kind": "dataset", "length": 60000, "sampled": 2000, ...}],
     "notes": ["what Torch Doctor assumed"], "error": {"kind", "message", "detail"} | null,
     "durationSeconds": float | null, "python": str | null}
"""

from __future__ import annotations

from typing import Any, Optional

from .thresholds import MAX_INDICES

CHECK = "data"
TITLE = "Data check"
PASS = "PASS"
FINDINGS = "FINDINGS"
ERROR = "ERROR"
ERRORS = "error"  # severities
WARNING = "warning"

# kinds, so tests and the view branch without parsing prose
NONFINITE = "nonfinite"
BLANK_DRAWS = "blank-augmentation"
CONSTANT = "constant-samples"
UINT8_RANGE = "uint8-range-floats"
UNSCALED = "unnormalised"
MISMATCHED_STATS = "normalisation-mismatch"
CHANNELS_LAST = "channels-last"
FLOAT64 = "float64-inputs"
FLOAT_LABELS = "float-class-labels"
ONEHOT_LABELS = "onehot-labels-for-loss"
INDEX_LABELS = "index-labels-for-binary-loss"
TRANSPOSED = "height-width-swapped"
IMBALANCE = "label-imbalance"
LABEL_RANGE = "labels-out-of-range"
ONE_OUTPUT = "one-output-many-classes"
UNSEEN_LABELS = "unseen-labels"
DUP_WITHIN = "duplicates-within-split"
DUP_ACROSS = "duplicates-across-splits"
DRIFT = "drift"
TEXT_NUMBERS = "numbers-as-text"
MISSING = "missing-values"
CONSTANT_COLUMN = "constant-column"
ID_OVERLAP = "id-overlap"
TEMPORAL = "temporal-leakage"
TOKEN_RANGE = "token-ids-out-of-range"
PADDING = "padding-share"
EMPTY = "empty-split"
SORTED_UNSHUFFLED = "unshuffled-class-runs"  # a training loader in index order over data stored class by class
STUCK = "draw-did-not-return"  # a __getitem__ or a DataLoader batch that never returned (stuck.py)


def finding(
    kind: str,
    severity: str,
    split: str,
    message: str,
    indices: Optional[list] = None,
    count: Optional[int] = None,
    source: Optional[dict] = None,
    **details: Any,
) -> dict[str, Any]:
    ids = [int(i) if isinstance(i, (int, float)) or hasattr(i, "__index__") else i for i in (indices or [])]
    return {
        "kind": kind,
        "severity": severity,
        "split": split,
        "message": message,
        "indices": ids[:MAX_INDICES],
        "count": len(ids) if count is None else int(count),
        "source": source,
        "details": details,
    }


def new_result(target: str, file: str) -> dict[str, Any]:
    return {
        "check": CHECK,
        "title": TITLE,
        "target": target,
        "file": file,
        "verdict": None,
        "headline": "",
        "findings": [],
        "splits": [],
        "notes": [],
        "error": None,
        "durationSeconds": None,
        "python": None,
    }


def error_result(target: str, file: str, kind: str, message: str, detail: str = "") -> dict[str, Any]:
    result = new_result(target, file)
    result["verdict"] = ERROR
    result["headline"] = message
    result["error"] = {"kind": kind, "message": message, "detail": detail}
    return result


def _counted(split: dict[str, Any]) -> str:
    """``40 samples``, or ``40 samples, statistics over 28`` when the others have other shapes."""
    drawn, covered = split["sampled"], split.get("statsSampled", split["sampled"])
    return f"{drawn} samples" + (f", statistics over {covered}" if split.get("otherShapes") else "")


def conclude(result: dict[str, Any]) -> dict[str, Any]:
    """Set the verdict and headline from the findings."""
    found = result["findings"]
    names = ", ".join(f"{s['name']} ({_counted(s)})" for s in result["splits"])
    if not found:
        result["verdict"] = PASS
        result["headline"] = f"PASS: nothing wrong found in {names or 'the data'}."
        return result
    errors = sum(1 for f in found if f["severity"] == ERRORS)
    result["verdict"] = FINDINGS
    result["headline"] = (
        f"{len(found)} finding{'s' if len(found) != 1 else ''} ({errors} error{'s' if errors != 1 else ''}) "
        f"in {names}: " + "; ".join(sorted({f["kind"] for f in found}))
    )
    return result


def exit_status(result: dict[str, Any]) -> int:
    """0 nothing found, 1 findings, 2 the check could not run."""
    return {PASS: 0, FINDINGS: 1}.get(result.get("verdict") or "", 2)
