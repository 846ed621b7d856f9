"""The data-check result as text for a terminal (backend side, stdlib only)."""

from __future__ import annotations

import os
import textwrap

from . import findings as F

SHOWN = 20  # sample indices listed per finding in the text report


def _wrap(text: str, indent: str) -> str:
    return textwrap.fill(text, width=110, initial_indent=indent, subsequent_indent=indent + "  ")


def _where(source) -> str:
    if not source:
        return ""
    return f"{os.path.relpath(source['file']) if os.path.isabs(source['file']) else source['file']}:{source['line']}"


def render(result: dict) -> str:
    lines = [
        f"{result.get('verdict')}  {result.get('title', F.TITLE)} on {result.get('target')} ({result.get('file')})"
    ]
    lines.append(_wrap(str(result.get("headline") or ""), ""))
    error = result.get("error")
    if error:
        if error.get("detail"):
            lines += ["", error["detail"].rstrip()]
        if result.get("snippet"):
            lines += ["", "Add to the file:", textwrap.indent(result["snippet"].rstrip(), "    ")]
        return "\n".join(lines)
    for f in result.get("findings") or []:
        lines.append("")
        lines.append(f"{'!!' if f['severity'] == F.ERRORS else '! '} {f['kind']} [{f['severity']}] in {f['split']}")
        lines.append(_wrap(f["message"], "   "))
        if f.get("indices"):
            shown = f["indices"][:SHOWN]
            # ``count`` is every sample concerned; ``indices`` keeps only the first few of them
            more = f" (+{f['count'] - len(shown)} more)" if f["count"] > len(shown) else ""
            lines.append(_wrap("samples: " + ", ".join(map(str, shown)) + more, "   "))
        if f.get("source"):
            lines.append(f"   at {_where(f['source'])}")
    lines += ["", "Splits:"]
    for s in result.get("splits") or []:
        parts = [f"{s['kind']}", f"{s['sampled']} drawn" + (f" of {s['length']}" if s.get("length") else "")]
        if s.get("otherShapes"):
            parts.append(f"statistics over the {s.get('statsSampled')} of sample shape {s['shape']} {s.get('dtype')}")
        elif s.get("shape"):
            parts.append(f"sample shape {s['shape']} {s.get('dtype')}")
        if s.get("channelMean"):
            parts.append("mean " + _nums(s["channelMean"]) + " std " + _nums(s["channelStd"]))
        if s.get("labels"):
            items = list(s["labels"].items())
            what = f"box labels ({sum(s['labels'].values())} boxes)" if s.get("labelKind") == "boxes" else "labels"
            parts.append(
                what + " " + ", ".join(f"{k}: {v}" for k, v in items[:10]) + (" ..." if len(items) > 10 else "")
            )
        if s.get("columns"):
            parts.append(f"{s['columns']} columns")
        lines.append(_wrap(f"{s['name']}: " + "; ".join(parts), "  "))
    notes = [n for n in result.get("notes") or [] if "\n" not in n]
    if notes:
        lines += ["", "What Torch Doctor assumed:"] + [_wrap(n, "  - ") for n in notes]
    return "\n".join(lines)


def _nums(values) -> str:
    if not values:
        return "-"
    shown = ", ".join(f"{v:.3g}" for v in values[:8])
    return f"[{shown}{', ...' if len(values) > 8 else ''}]"
