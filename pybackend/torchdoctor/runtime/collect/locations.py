"""Where a module of the model is defined, so that a click in a view can open that line.

For ``encoder.block.fc`` the best place is the assignment ``self.fc = ...`` in the source of the
class of ``encoder.block`` (searched in that class and its non-torch bases, also
``self.a, self.b = ...``, annotated assignments and ``add_module("fc", ...)``). Children of
torch's containers (``net.0`` of an ``nn.Sequential``) have no assignment of their own: they take
their container's. Failing that, the module's class definition when it is the program's own,
else the nearest ancestor's location, else the root class. Sources are read with ``inspect``
(through ``linecache``) once per class and cached; nothing is imported or executed.
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any, Dict, Optional, Tuple

_SOURCES: Dict[type, Optional[Tuple[str, int, list]]] = {}
_FOUND: Dict[Tuple[type, str], Optional[dict]] = {}
_CANDIDATES: Dict[Tuple[type, str], int] = {}  # how many lines assign it (one per branch)


def is_library_class(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module == "builtins" or module == "torch" or module.startswith("torch.")


def _source(cls: type) -> Optional[Tuple[str, int, list]]:
    """``(file, first line, lines)`` of a class, or None when there is no source."""
    if cls not in _SOURCES:
        try:
            path = inspect.getsourcefile(cls)
            lines, start = inspect.getsourcelines(cls)
            _SOURCES[cls] = (os.path.abspath(path), max(int(start), 1), lines) if path else None
        except Exception:  # builtins, classes made at runtime, missing files
            _SOURCES[cls] = None
    return _SOURCES[cls]


def class_location(cls: type) -> Optional[dict]:
    src = _source(cls)
    return {"file": src[0], "line": src[1], "kind": "class"} if src else None


def assignment_location(owner_cls: type, attr: str) -> Optional[dict]:
    """The line of ``self.<attr> = ...`` in ``owner_cls`` or one of its program-defined bases."""
    key = (owner_cls, attr)
    if key in _FOUND:
        return _FOUND[key]
    found = None
    name = re.escape(attr)
    patterns = [
        re.compile(rf"\bself\.{name}\s*(?::[^=]+)?=(?!=)"),
        re.compile(rf"\bself\.{name}\s*,(?:\s*self\.\w+\s*,?)*\s*=(?!=)"),
        re.compile(rf"\bself\.(?:\w+\s*,\s*self\.)+{name}\s*(?:,\s*self\.\w+\s*)*=(?!=)"),
        re.compile(rf"\b(?:add_module|register_module|setattr)\(\s*(?:self\s*,\s*)?['\"]{name}['\"]"),
    ]
    for cls in getattr(owner_cls, "__mro__", (owner_cls,)):
        if is_library_class(cls) or cls is object:
            continue
        src = _source(cls)
        if src is None:
            continue
        path, start, lines = src
        hits = [
            offset
            for offset, line in enumerate(lines)
            if "self" in line.split("#", 1)[0] and any(p.search(line.split("#", 1)[0]) for p in patterns)
        ]
        if hits:
            # Several assignments (one per branch: `if cross_attention: self.c_attn = ...`):
            # which one ran is not known here; the snapshot then prefers the line that called it.
            found = {"file": path, "line": start + hits[0], "kind": "assignment"}
            _CANDIDATES[key] = len(hits)
            break
    _FOUND[key] = found
    return found


def locate_all(root: Any, names: Dict[str, Any]) -> Dict[str, Optional[dict]]:
    """``{path: location}`` for every named submodule of ``root`` (``""`` is the root)."""
    out: Dict[str, Optional[dict]] = {"": class_location(type(root))}
    for path in sorted((p for p in names if p), key=lambda p: p.count(".")):
        out[path] = _locate(path, names, out)
    return out


def _locate(path: str, names: Dict[str, Any], known: Dict[str, Optional[dict]]) -> Optional[dict]:
    parent_path, _, attr = path.rpartition(".")
    parent = names.get(parent_path)
    module = names.get(path)
    if parent is not None and not is_library_class(type(parent)):
        found = assignment_location(type(parent), attr)
        if found:
            many = _CANDIDATES.get((type(parent), attr), 1)
            return dict(found, candidates=many) if many > 1 else found
    if module is not None and not is_library_class(type(module)):
        found = class_location(type(module))
        if found:
            return found
    return known.get(parent_path) or known.get("")


def prefer_call_sites(
    locations: Dict[str, Optional[dict]], sites: Dict[str, Optional[tuple]]
) -> Dict[str, Optional[dict]]:
    """The line that ran, where the definition is ambiguous or unknown: for a module assigned on
    several lines (branches) or with no location, the line of the program that called it in
    this pass (``kind: "call"``), unless that is inside torch. ``candidates`` is dropped."""
    out: Dict[str, Optional[dict]] = {}
    for path, loc in locations.items():
        site = sites.get(path)
        ambiguous = loc is None or int(loc.get("candidates", 1)) > 1
        if ambiguous and site is not None and not _in_torch(site[0]):
            out[path] = {"file": os.path.abspath(site[0]), "line": int(site[1]), "kind": "call"}
        elif loc is not None:
            out[path] = {k: v for k, v in loc.items() if k != "candidates"}
        else:
            out[path] = None
    return out


_TORCH_DIR = None


def _in_torch(path: str) -> bool:
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import sys

        torch = sys.modules.get("torch")
        _TORCH_DIR = os.path.dirname(os.path.abspath(getattr(torch, "__file__", "") or "")) + os.sep
    return os.path.abspath(path).startswith(_TORCH_DIR) or path.startswith("<")
