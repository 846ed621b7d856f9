"""Turning the runtime on inside the user's program: one "when torch is imported" registry.

The pydevd plugin calls :func:`activate` once, when debugpy loads it (before the program
starts). What gets installed depends on the debuggee's environment, which the extension sets:

- ``TORCHDOCTOR_RUNTIME=1`` (every Torch Doctor debug session): the collection behind the
  gradient-flow and shape-trace views (:mod:`collect.install`). ``TORCHDOCTOR_COLLECT=0`` (or
  ``off``) opts out.
- ``TORCHDOCTOR_ANOMALY=<json>``: the anomaly watch. :func:`anomaly.startup.activate`
  (called from here, after the collection) reads its settings and registers its installer with
  :func:`when_torch_imported` like any other, so the plugin has one entry point and torch one hook.
- ``TORCHDOCTOR_MONITOR=<json>``: the training monitor (:func:`monitor.startup.activate`, the
  same way, after the anomaly watch; ``docs/monitor.md``).
- ``RANK`` and ``WORLD_SIZE`` > 1 (a rank of the torchrun launch): the distributed checks a
  debug session can run (``distributed/debug_rank.py``; ``docs/distributed.md``).

Installers run the moment torch has finished importing: at once if ``torch`` is already in
``sys.modules`` (attach), else from a one-shot finder on ``sys.meta_path`` that lends torch's
real spec a loader which calls back after torch's ``__init__`` has run. A program that never
imports torch never gets anything from us. Every installer registered with
:func:`when_torch_imported` shares that one finder and runs in registration order (the
collection first, so its forward hooks see a module's output before any hook that may pause
the debugger). Stdlib only; nothing here raises: failures are kept in :func:`problems`.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import threading
from typing import Any, Callable, List, Mapping, Optional, Tuple

RUNTIME_ENV = "TORCHDOCTOR_RUNTIME"
COLLECT_ENV = "TORCHDOCTOR_COLLECT"

_LOCK = threading.RLock()
_PENDING: List[Tuple[str, Callable[[Any], None]]] = []  # waiting for ``import torch``
_DONE: List[str] = []  # names of installers already run (or queued): each runs once
_PROBLEMS: List[str] = []


def activate(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """Arrange every installer this environment asks for; the names of those arranged."""
    env = os.environ if environ is None else environ
    arranged: List[str] = []
    try:
        if env.get(RUNTIME_ENV) == "1" and env.get(COLLECT_ENV, "1").strip().lower() not in ("0", "off", "false", "no"):
            if when_torch_imported("collect", _install_collection):
                arranged.append("collect")
    except Exception as exc:
        _problem(f"the collection could not be arranged: {type(exc).__name__}: {exc}")
    try:
        from .anomaly import startup as anomaly_startup

        if anomaly_startup.activate(env):
            arranged.append("anomaly")
    except Exception as exc:  # an older or newer runtime without the watch: not our business here
        _problem(f"the anomaly watch could not be arranged: {type(exc).__name__}: {exc}")
    try:
        from .monitor import startup as monitor_startup

        if monitor_startup.activate(env):
            arranged.append("monitor")
    except Exception as exc:
        _problem(f"the training monitor could not be arranged: {type(exc).__name__}: {exc}")
    try:
        from ..distributed import debug_rank

        if debug_rank.wanted(env) and when_torch_imported(debug_rank.NAME, debug_rank.install):
            arranged.append(debug_rank.NAME)
    except Exception as exc:
        _problem(f"the distributed checks could not be arranged: {type(exc).__name__}: {exc}")
    return arranged


def when_torch_imported(name: str, callback: Callable[[Any], None]) -> bool:
    """Run ``callback(torch)`` once torch is imported (now, if it is); False if ``name`` already ran."""
    with _LOCK:
        if name in _DONE:
            return False
        _DONE.append(name)
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "nn"):
            _PENDING.append((name, callback))
            if not any(isinstance(f, _TorchImportFinder) for f in sys.meta_path):
                sys.meta_path.insert(0, _TorchImportFinder())
            return True
    _run(name, callback, torch)
    return True


def forget(name: str) -> None:
    """Let ``name`` be arranged again, dropping its callback if it still waits for torch; our
    finder leaves ``sys.meta_path`` once nothing waits (``anomaly.startup.reset``)."""
    with _LOCK:
        if name in _DONE:
            _DONE.remove(name)
        _PENDING[:] = [entry for entry in _PENDING if entry[0] != name]
        if not _PENDING:
            sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _TorchImportFinder)]


def problems() -> List[str]:
    """What kept an installer from running (kept, never raised into the program)."""
    return list(_PROBLEMS)


def reset() -> None:
    """Forget every arrangement and take our finder off ``sys.meta_path`` (tests)."""
    with _LOCK:
        _PENDING.clear()
        _DONE.clear()
        _PROBLEMS.clear()
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _TorchImportFinder)]


def _install_collection(torch: Any) -> None:
    from .collect import install as collect_install

    collect_install.install()


def _problem(text: str) -> None:
    if len(_PROBLEMS) < 20:
        _PROBLEMS.append(text)


def _run(name: str, callback: Callable[[Any], None], torch: Any) -> None:
    try:
        callback(torch)
    except Exception as exc:
        _problem(f"{name} could not start: {type(exc).__name__}: {exc}")


def _torch_imported(torch: Any) -> None:
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    for name, callback in pending:
        _run(name, callback, torch)


class _TorchImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: lends ``torch``'s real spec a loader that calls back when done."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]  # one shot, no recursion
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            try:
                spec = find(fullname, path, target) if find else None
            except Exception:
                spec = None
            if spec is not None:
                break
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _CallbackLoader(spec.loader)
        return spec


class _CallbackLoader(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)  # torch's own import: its errors are the program's
        module.__loader__ = self._loader  # leave no trace of ours on the module
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        _torch_imported(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
