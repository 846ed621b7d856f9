"""Reading a runtime snapshot defensively: it was written by the user's process.

Every accessor tolerates missing keys and wrong types (a value of the wrong kind reads as
absent), so a snapshot from a newer or older runtime degrades instead of failing. The schema
is documented in ``torchdoctor/runtime/collect/snapshot.py``; this module reads ``version`` 1.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

SCHEMA = "torchdoctor.snapshot"
SUPPORTED_VERSIONS = (1,)


def problem(snapshot: Any) -> Optional[str]:
    """Why this is not a snapshot we can read, or None."""
    if not isinstance(snapshot, dict):
        return "the snapshot is not a JSON object"
    if snapshot.get("schema") != SCHEMA:
        return "this is not a Torch Doctor snapshot"
    version = snapshot.get("version")
    if version not in SUPPORTED_VERSIONS:
        return (
            f"snapshot version {version!r} is not supported by this backend (it reads "
            f"{', '.join(str(v) for v in SUPPORTED_VERSIONS)}): the extension and its runtime differ"
        )
    return None


def num(value: Any) -> Optional[float]:
    """A finite number, or None (null, NaN/Inf spelled as strings, anything else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def integer(value: Any, default: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return int(value)


def text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def obj(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def objs(value: Any) -> List[Dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def location(value: Any) -> Optional[Dict[str, Any]]:
    """``{"file", "line"}`` when both are usable; a view opens it on click."""
    o = obj(value)
    file, line = o.get("file"), integer(o.get("line"), 0)
    if not isinstance(file, str) or not file or line < 1:
        return None
    return {"file": file, "line": line}


def tensor_meta(leaf: Any) -> Dict[str, Any]:
    """``{"shape": [..] | None, "dtype": str | None, "device": str | None}`` (+ ``type`` for non-tensors)."""
    o = obj(leaf)
    dims = o.get("shape")
    if isinstance(dims, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return {
            "shape": dims,
            "dtype": o.get("dtype") if isinstance(o.get("dtype"), str) else None,
            "device": o.get("device") if isinstance(o.get("device"), str) else None,
        }
    return {"shape": None, "dtype": None, "device": None, "type": text(o.get("type"), "?")}


def first_tensor(leaves: Any) -> Optional[Dict[str, Any]]:
    for leaf in objs(leaves):
        meta = tensor_meta(leaf)
        if meta["shape"] is not None:
            return meta
    return None


def nonfinite(stats: Dict[str, Any]) -> Optional[int]:
    """How many values were NaN/Inf: a count, -1 when present but not counted, 0 when none."""
    if not stats:
        return 0
    counted = [integer(stats.get(k), -1) for k in ("nan", "posinf", "neginf") if stats.get(k) is not None]
    if counted and all(c >= 0 for c in counted) and len(counted) == 3:
        return sum(counted)
    total = stats.get("nonFinite")
    if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
        return total
    if stats.get("hasNonFinite"):
        return -1
    return 0
