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
        for offset, line in enumerate(lines):
            code = line.split("#", 1)[0]
            if "self" in code and any(p.search(code) for p in patterns):
                found = {"file": path, "line": start + offset, "kind": "assignment"}
                break
        if found:
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
            return found
    if module is not None and not is_library_class(type(module)):
        found = class_location(type(module))
        if found:
            return found
    return known.get(parent_path) or known.get("")
