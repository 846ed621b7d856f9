"""Custom request params as plain JSON values.

pygls structures the params of a method it has no type for into namedtuples; the
features want the dicts and lists the client sent.
"""

from __future__ import annotations

from typing import Any


def plain(obj: Any) -> Any:
    """Namedtuples (recursively) back to dicts and lists; everything else unchanged."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj
