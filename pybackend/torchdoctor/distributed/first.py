"""Which rank went wrong first: every rank's reports, ordered by the time each was made.

The other ranks usually fail *because of* the first one (a NaN all-reduced into every replica,
a collective whose peer left), so only the first is the cause; the rest are named as followers.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional


def first_report(reports: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The earliest anomaly (advice excluded) that carries a rank, else the earliest at all."""
    anomalies = [r for r in reports if not r.get("advice")]
    if not anomalies:
        return None
    ranked = [r for r in anomalies if r.get("rank") is not None] or anomalies
    return min(ranked, key=lambda r: (float(r.get("time", 0.0)), int(r.get("rank") or 0)))


def summary(reports: List[Dict[str, Any]], world: int) -> Optional[str]:
    """One line for the end of the job: the first rank, its step, its sentence, the followers."""
    first = first_report(reports)
    if first is None:
        return None
    rank = first.get("rank")
    others = sorted({int(r["rank"]) for r in reports if r.get("rank") is not None and not r.get("advice")} - {rank})
    who = f"rank {rank}" if rank is not None else "a process"
    line = f"torchdoctor run: {who} of {world} went wrong first: {first.get('sentence', 'an anomaly')}"
    if others:
        line += f" (then rank{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})"
    return line
