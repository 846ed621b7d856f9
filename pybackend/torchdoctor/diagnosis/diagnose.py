"""One snapshot in, both view models out: what ``torchDoctor/diagnoseSnapshot`` answers."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import gradient_flow, shape_trace
from .rules import Thresholds
from .snapshot_data import obj, problem, text


def diagnose(snapshot: Any, thresholds: Optional[Thresholds] = None) -> Dict[str, Any]:
    """``{"status", "message", "gradientFlow", "shapeTrace"}`` (a view model is null when the
    snapshot has nothing for it; ``message`` then says why)."""
    th = thresholds or Thresholds()
    why = problem(snapshot)
    if why is not None:
        return {"status": "invalid", "message": why, "gradientFlow": None, "shapeTrace": None}
    status = text(snapshot.get("status"), "error")
    message = text(snapshot.get("message"))
    if status != "ok":
        return {
            "status": status,
            "message": message or "the snapshot is empty",
            "gradientFlow": None,
            "shapeTrace": None,
        }
    flow = gradient_flow.build(snapshot, th)
    flags = _flags_by_call(snapshot, flow)
    trace = shape_trace.build(snapshot, flags)
    return {"status": "ok", "message": message, "gradientFlow": flow, "shapeTrace": trace}


def _flags_by_call(snapshot: Dict[str, Any], flow: Dict[str, Any]) -> Dict[int, List[Dict[str, Any]]]:
    """The activation flags, keyed by call index, for the shape trace's rows."""
    out: Dict[int, List[Dict[str, Any]]] = {}
    leaf_calls = [
        c for c in snapshot.get("calls", []) if isinstance(c, dict) and c.get("leaf") and obj(c.get("activation"))
    ]
    for call, act in zip(leaf_calls, flow.get("activations", [])):
        if act["flags"] and isinstance(call.get("index"), int):
            out[call["index"]] = act["flags"]
    return out
