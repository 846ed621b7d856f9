"""A check result as terminal text (``torchdoctor check`` without ``--json``). No torch.

Verdict first, then the headline, the reasons, what was inferred, the curve as a
one-line sparkline with its numbers, the table with aligned columns, the snippet
to add, and for errors the detail (a traceback, the offending line).
"""

from __future__ import annotations

import math
from typing import Any

from ..spelling import fmt_num

_BLOCKS = "▁▂▃▄▅▆▇█"
SPARK_WIDTH = 48


def render(result: dict[str, Any]) -> str:
    lines = [_title(result), f"  {result.get('headline', '')}"]
    lines += [f"  - {s}" for s in result.get("sentences") or []]
    if result.get("inferred"):
        lines.append("  What Torch Doctor assumed:")
        lines += [f"  - {s}" for s in result["inferred"]]
    if result.get("curve"):
        lines += _curve(result["curve"])
    if result.get("table"):
        lines += _table(result["table"])
    if result.get("snippet"):
        lines.append("  Add this to the file (or to a sibling torchdoctor_example.py):")
        lines += ["    " + ln for ln in result["snippet"].rstrip().splitlines()]
    error = result.get("error") or {}
    if error.get("detail"):
        lines.append("  Detail:")
        lines += ["    " + ln for ln in str(error["detail"]).rstrip().splitlines()[-25:]]
    if (result.get("details") or {}).get("csv"):
        lines.append(f"  CSV written to {result['details']['csv']}")
    return "\n".join(lines)


def _title(result: dict) -> str:
    took = result.get("durationSeconds")
    extra = f"{took:.1f} s" if isinstance(took, (int, float)) else ""
    if result.get("python"):
        extra += f", {result['python']}"
    return f"{result.get('verdict') or '?':<5} {result.get('title')} on {result.get('className')}  ({result.get('file')}{'; ' + extra if extra else ''})"


def sparkline(values: list, width: int = SPARK_WIDTH) -> str:
    finite = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not finite:
        return ""
    step = max(1, math.ceil(len(values) / width))
    sampled = [values[i] for i in range(0, len(values), step)]
    lo, hi = min(finite), max(finite)
    span = (hi - lo) or 1.0
    return "".join(
        "×"
        if not (isinstance(v, (int, float)) and math.isfinite(v))
        else _BLOCKS[min(len(_BLOCKS) - 1, int((v - lo) / span * (len(_BLOCKS) - 1) + 0.5))]
        for v in sampled
    )


def _curve(curve: dict) -> list[str]:
    out = []
    for series in curve.get("series") or []:
        pts = series.get("points") or []
        if not pts:
            continue
        ys = [p[1] for p in pts]
        first, last = pts[0], pts[-1]
        x = (lambda v: fmt_num(v, 2)) if curve.get("xScale") == "log" else (lambda v: fmt_num(v, 6))
        out.append(
            f"  {series['name']:<9} {sparkline(ys)}  {_num(first[1])} at {curve['xLabel']} {x(first[0])} -> {_num(last[1])} at {x(last[0])}"
        )
    for mark in curve.get("marks") or []:
        out.append(f"  mark      {mark['label']}")
    return out


def _num(v: Any) -> str:
    return fmt_num(v, 4) if isinstance(v, (int, float)) else "NaN"


def _table(table: dict) -> list[str]:
    columns = list(table.get("columns") or [])
    rows = [list(r) for r in table.get("rows") or []]
    if "depth" in columns:  # indent names by depth instead of printing the number
        d = columns.index("depth")
        for r in rows:
            r[0] = "  " * int(r[d] or 0) + str(r[0])
            del r[d]
        columns.pop(d)
    cells = [[_cell(c) for c in r] for r in rows]
    widths = [max([len(columns[i])] + [len(r[i]) for r in cells]) for i in range(len(columns))]
    out = ["  " + "  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    error_row = table.get("errorRow")
    for i, r in enumerate(cells):
        mark = "!!" if i == error_row else "  "
        out.append(mark + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return out


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return fmt_num(value, 4)
    if isinstance(value, list):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return str(value)
