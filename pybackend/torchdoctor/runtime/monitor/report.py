"""``torchdoctor run --report FILE.json|FILE.html``: the run's series and findings, for CI.

JSON: ``{"version": 1, "script", "started", "ended", "steps", "series": {KEY: bucketed}, "findings":
[...], "dropped": 0}`` (``docs/monitor.md``). HTML: one self-contained page (no script, no remote
resource: inline SVG) with the charts and the verdict cards, readable offline as a CI artifact.
"""

from __future__ import annotations

import html
import json
import math
import os
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .channel import finite
from .series import points

VERSION = 1
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def build(monitor: Any, script: Optional[str] = None, extra: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    findings = monitor.findings() + list(extra or [])
    return finite(
        {
            "version": VERSION,
            "script": os.path.abspath(script) if script else None,
            "started": monitor.started,
            "ended": time.time(),
            "steps": monitor.total_steps(),
            "series": {key: series.to_json() for key, series in sorted(monitor.series.items())},
            "findings": findings,
            "dropped": 0,
        }
    )


def write(path: str, report: Dict[str, Any]) -> None:
    text = (
        render_html(report) if path.lower().endswith((".html", ".htm")) else json.dumps(report, separators=(",", ":"))
    )
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


# -- HTML --------------------------------------------------------------------------------------

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")
CSS = """
body{font:14px system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:16px;margin:20px 0 6px}
.card{border-left:4px solid #999;padding:6px 10px;margin:8px 0;background:#f7f7f7}
.error{border-color:#d62728}.warning{border-color:#e6a700}.info{border-color:#1f77b4}
.kind{font-weight:600}.where{color:#555;font-family:monospace}
.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{width:460px}
svg{background:#fcfcfc;border:1px solid #ddd}.legend span{margin-right:10px}
"""


def render_html(report: Dict[str, Any]) -> str:
    series = report.get("series") or {}
    title = f"Torch Doctor training report: {os.path.basename(str(report.get('script') or 'run'))}"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{report.get('steps', 0)} training steps; {len(report.get('findings') or [])} findings.</p>",
        "<h2>Verdicts</h2>",
        _cards(report.get("findings") or []),
        "<h2>Curves</h2><div class='charts'>",
    ]
    for chart_title, keys, log in _chart_plan(series):
        parts.append(_chart(chart_title, [(k, points(series[k])) for k in keys], log))
    parts.append("</div></body></html>")
    return "\n".join(parts)


def _cards(findings: List[Dict[str, Any]]) -> str:
    if not findings:
        return "<p>No findings: nothing in the curves looked wrong.</p>"
    out = []
    for f in sorted(findings, key=lambda f: (SEVERITY_ORDER.get(str(f.get("severity")), 3), f.get("step") or 0)):
        where = f.get("where") or {}
        at = f"{where.get('path')}:{where.get('line')}" if where else ""
        out.append(
            f"<div class='card {html.escape(str(f.get('severity')))}'><span class='kind'>{html.escape(str(f.get('kind')))}"
            f"</span> ({html.escape(str(f.get('severity')))}, step {f.get('step')}) "
            f"<span class='where'>{html.escape(at)}</span><br>{html.escape(str(f.get('sentence')))}</div>"
        )
    return "\n".join(out)


def _chart_plan(series: Dict[str, Any]) -> List[Tuple[str, List[str], bool]]:
    names = sorted({k.split("/")[0] for k in series if k.startswith(("opt", "backward"))})
    plan: List[Tuple[str, List[str], bool]] = []
    for name in names:
        keys = [k for k in (f"{name}/loss",) if k in series]
        if name == (names[0] if names else None) and "eval/loss" in series:
            keys.append("eval/loss")
        plan.append((f"loss ({name})", keys, False))
        plan.append((f"learning rate ({name})", sorted(k for k in series if k.startswith(f"{name}/lr/")), False))
        plan.append(
            (
                f"gradient norm ({name})",
                [k for k in (f"{name}/grad_norm", f"{name}/grad_norm_clipped") if k in series],
                False,
            )
        )
        plan.append(
            (f"update ratio ({name})", sorted(k for k in series if k.startswith(f"{name}/update_ratio/")), True)
        )
        plan.append((f"step time, s ({name})", sorted(k for k in series if k.startswith(f"{name}/time/")), False))
        plan.append((f"samples/s ({name})", [k for k in (f"{name}/samples_per_s",) if k in series], False))
    plan.append(("memory, bytes", [k for k in ("rss", "cuda/allocated", "cuda/reserved") if k in series], False))
    plan.append(("your series", sorted(k for k in series if k.startswith("user/")), False))
    return [p for p in plan if p[1]]


def _chart(title: str, lines: Sequence[Tuple[str, List[Tuple[int, Optional[float]]]]], log: bool) -> str:
    width, height, pad = 460, 200, 40
    xs = [s for _, pts in lines for s, v in pts if v is not None]
    ys = [_y(v, log) for _, pts in lines for s, v in pts if v is not None and (v > 0 or not log)]
    if not xs or not ys:
        return ""
    x0, x1 = min(xs), max(xs) or 1
    y0, y1 = min(ys), max(ys)
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    sx = (width - 2 * pad) / ((x1 - x0) or 1)
    sy = (height - 2 * pad) / (y1 - y0)
    body = []
    legend = []
    for i, (key, pts) in enumerate(lines):
        color = COLORS[i % len(COLORS)]
        coords = " ".join(
            f"{pad + (s - x0) * sx:.1f},{height - pad - (_y(v, log) - y0) * sy:.1f}"
            for s, v in pts
            if v is not None and (v > 0 or not log)
        )
        body.append(f"<polyline fill='none' stroke='{color}' stroke-width='1.5' points='{coords}'/>")
        legend.append(f"<span style='color:{color}'>&#9632; {html.escape(key)}</span>")
    axis = (
        f"<text x='{pad}' y='{height - 8}' font-size='11'>step {x0}</text>"
        f"<text x='{width - pad - 60}' y='{height - 8}' font-size='11'>step {x1}</text>"
        f"<text x='2' y='{pad - 8}' font-size='11'>{_label(y1, log)}</text>"
        f"<text x='2' y='{height - pad + 12}' font-size='11'>{_label(y0, log)}</text>"
    )
    return (
        f"<div class='chart'><b>{html.escape(title)}</b>{' (log)' if log else ''}"
        f"<svg width='{width}' height='{height}' role='img' aria-label='{html.escape(title)}'>{''.join(body)}{axis}</svg>"
        f"<div class='legend'>{''.join(legend)}</div></div>"
    )


def _y(value: float, log: bool) -> float:
    return math.log10(value) if log else value


def _label(value: float, log: bool) -> str:
    return f"{10**value:.3g}" if log else f"{value:.4g}"
