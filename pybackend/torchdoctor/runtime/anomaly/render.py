"""A report as a few lines of plain text, for a terminal or a CI log (``torchdoctor run``).

The first line is the same ``[torchdoctor] anomaly: <sentence>`` the debugger gets; the rest
are the facts under it: kind and step, the module or parameter, the summaries of its inputs and
output, and the user's stack (innermost first).
"""

from __future__ import annotations

from typing import Any, Dict, List

from .pause import LINE_PREFIX


def render_report(report: Dict[str, Any], with_sentence: bool = True) -> str:
    """The lines; ``with_sentence=False`` leaves out the first (already printed when it happened)."""
    lines = [LINE_PREFIX + str(report.get("sentence", ""))] if with_sentence else []
    lines.append(_row("kind", f"{report.get('kind')} ({report.get('phase')}, step {report.get('step')})"))
    if report.get("qualname") and report.get("phase") == "forward":
        lines.append(_row("module", f"{report['qualname']} ({report.get('module_type')}, in {report.get('root')})"))
    if report.get("origin_where"):
        lines.append(_row("made at", f"{report['origin_where']}: {report.get('origin_code', '')}"))
    reached = report.get("reached")
    if reached:
        lines.append(_row("reached", f"{reached.get('qualname')} ({reached.get('module_type')}), as its input"))
    if report.get("param"):
        lines.append(_row("param", str(report["param"])))
    for summary in report.get("input_summaries") or []:
        lines.append(_row("input", summary))
    if report.get("output_summary"):
        lines.append(_row("gradient" if report.get("param") else "output", str(report["output_summary"])))
    if report.get("loss") is not None and report.get("phase") != "forward":
        lines.append(_row("loss", str(report["loss"])))
    if report.get("where") and report.get("phase") != "forward":
        lines.append(_row("where", str(report["where"])))
    if not report.get("exact", True):
        lines.append(_row("note", "found by the once-per-step device check (inputs not kept)"))
    lines += _stack(report.get("user_stack") or [])
    return "\n".join(lines)


def _row(label: str, text: str) -> str:
    return f"  {label + ':' if label else '':<9} {text}"


def _stack(stack: List[str]) -> List[str]:
    out = []
    for i, entry in enumerate(stack):
        path, _, function = entry.rpartition(":")
        out.append(_row("stack" if i == 0 else "", f"{path} in {function}"))
    return out
