"""Names of modules and parameters as the user knows them: ``net.2``, ``encoder.layers.3.weight``.

A module does not know its parent, so the watch remembers every module its forward hook has
seen (one dict lookup per call; a weak reference the first time). The roots are the seen
modules that no other seen module contains; a module's name is its path in its root's
``named_modules()``. Roots and paths are recomputed only after a new module shows up, so a
steady training loop pays nothing here.

Roots are held weakly, as every seen module is: the watch must not keep the user's model alive.
A DDP model kept until the interpreter's finalization outlives the script's
``destroy_process_group()`` and gloo aborts the process as its threads go down ("terminate
called without an active exception"), and a script that builds models in a loop would keep them all.
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, List, Optional, Tuple

# Forget dead modules once this many are remembered (programs that build modules per call).
PRUNE_AT = 4096


class ModuleNames:
    def __init__(self) -> None:
        self.known: Dict[int, "weakref.ref[Any]"] = {}
        self._dirty = False
        self._roots: List["weakref.ref[Any]"] = []
        self._paths: Dict[int, Tuple["weakref.ref[Any]", str]] = {}
        self._params: Optional[List[Tuple[str, Any, Any]]] = None

    def see(self, module: Any) -> None:
        """Called from the hook for a module not yet in :attr:`known` (the caller tests)."""
        try:
            self.known[id(module)] = weakref.ref(module)
        except TypeError:
            return
        self._dirty = True
        if len(self.known) > PRUNE_AT:  # in place: the watch holds this dict
            for key in [k for k, r in self.known.items() if r() is None]:
                del self.known[key]

    def roots(self) -> List[Any]:
        self._refresh()
        return [root for root in (ref() for ref in self._roots) if root is not None]

    def name(self, module: Any, hint: Optional[Any] = None) -> Tuple[Optional[Any], str]:
        """``(root, path)``; path is ``""`` for a root itself, ``(None, "")`` if never seen.

        ``hint`` is the outermost module being called (from the stack): in the first forward,
        the model's own hook has not run yet when its layers' hooks do, so only the stack knows
        the root then.
        """
        if hint is not None:
            ref = self.known.get(id(hint))
            if ref is None or ref() is not hint:
                self.see(hint)
        self._refresh()
        found = self._paths.get(id(module))
        root = found[0]() if found is not None else None
        return (root, found[1]) if root is not None and found is not None else (None, "")

    def parameters(self) -> List[Tuple[str, Any, Any]]:
        """``(path, parameter, owning module)`` of every root, in registration order. Computed
        once after a new module shows up."""
        self._refresh()
        if self._params is None:
            self._params = []
            seen = set()
            for root in self.roots():
                for mod_path, module in root.named_modules():
                    for name, p in _own_parameters(module):
                        if id(p) not in seen:
                            seen.add(id(p))
                            self._params.append((_join(mod_path, name), p, module))
        return self._params

    def _refresh(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        alive = [m for m in (r() for r in self.known.values()) if m is not None]
        inside = set()
        for module in alive:
            for child in module.modules():
                if child is not module:
                    inside.add(id(child))
        wrappers = [m for m in alive if id(m) not in inside and unwrap(m) is not m]
        for wrapper in wrappers:  # torch.compile's OptimizedModule: the user's model is its _orig_mod
            inside.add(id(wrapper))
            inside.discard(id(unwrap(wrapper)))
        roots = [m for m in alive if id(m) not in inside]
        for wrapper in wrappers:
            if unwrap(wrapper) not in roots:
                roots.append(unwrap(wrapper))
        self._roots = [weakref.ref(root) for root in roots]
        self._paths = {}
        for root in roots:
            ref = weakref.ref(root)
            for path, module in root.named_modules(remove_duplicate=False):
                self._paths.setdefault(id(module), (ref, path))
        for wrapper in wrappers:
            self._paths[id(wrapper)] = (weakref.ref(unwrap(wrapper)), "")
        self._params = None


def unwrap(module: Any) -> Any:
    """The user's module inside ``torch.compile``'s wrapper (``OptimizedModule._orig_mod``). The
    wrapper's class is asked first: a ``torch.jit.script`` module's ``_modules`` has no ``get``
    (every report about one was lost to an AttributeError)."""
    if type(module).__name__ != "OptimizedModule":
        return module
    inner = module.__dict__.get("_modules", {}).get("_orig_mod") if hasattr(module, "__dict__") else None
    return inner if inner is not None else module


def _own_parameters(module: Any) -> List[Tuple[str, Any]]:
    """The module's own parameters by name. A user's module may override ``named_parameters``
    (a proxy raising for it): its exception is not the watch's error; its registered
    ``_parameters`` are read instead."""
    try:
        return list(module.named_parameters(recurse=False))
    except Exception:  # noqa: BLE001 - the user's override
        own = module.__dict__.get("_parameters") if hasattr(module, "__dict__") else None
        return [(k, p) for k, p in own.items() if p is not None] if isinstance(own, dict) else []


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
