"""Turning the watch on inside the user's program, with no change to their code.

The pydevd plugin (imported by debugpy before the program starts) and ``torchdoctor run`` call
:func:`activate`. If ``TORCHDOCTOR_ANOMALY`` is unset, nothing happens. Otherwise the watch is
installed the moment torch finishes importing: if torch is already in ``sys.modules`` (attach),
now; if not, a one-shot finder on ``sys.meta_path`` waits for the program's own ``import torch``
and installs the watch right after torch's ``__init__`` has run. A program that never imports
torch never gets it from us. Stdlib only; never raises.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from typing import Any, Callable, Mapping, Optional

from .anomaly_config import OFF, AnomalyConfig, from_env

_STATE: dict = {"activated": False, "problems": []}


def activate(environ: Optional[Mapping[str, str]] = None, on_break: Optional[Callable] = None,
             config: Optional[AnomalyConfig] = None) -> bool:
    """Arrange for the watch; True if it is (or will be, at ``import torch``) installed."""
    try:
        config = config or from_env(os.environ if environ is None else environ)
        if config is None or config.mode == OFF or _STATE["activated"]:
            return False
        _STATE["activated"] = True
        _STATE["problems"] = list(config.problems)
        _when_torch_imported(lambda torch: _install(config, on_break))
        return True
    except Exception as exc:
        _STATE["problems"].append(f"activation failed: {type(exc).__name__}: {exc}")
        return False


def problems() -> list:
    """Settings that were ignored, and anything that kept the watch from installing."""
    return list(_STATE["problems"])


def reset() -> None:
    """Forget an activation and take our finder off ``sys.meta_path`` (tests, ``torchdoctor run``)."""
    _STATE["activated"] = False
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _TorchImportFinder)]


def _install(config: AnomalyConfig, on_break: Optional[Callable]) -> None:
    try:
        from . import anomaly_watch

        anomaly_watch.install(config, on_break=on_break)
    except Exception as exc:
        _STATE["problems"].append(f"the anomaly watch could not start: {type(exc).__name__}: {exc}")


def _when_torch_imported(callback: Callable[[Any], None]) -> None:
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "nn"):
        callback(torch)
    else:
        sys.meta_path.insert(0, _TorchImportFinder(callback))


class _TorchImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: lends ``torch``'s real spec a loader that calls back when done."""

    def __init__(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]  # one shot, no recursion
        spec = _real_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _CallbackLoader(spec.loader, self.callback)
        return spec


def _real_spec(fullname, path, target):
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        spec = find(fullname, path, target) if find else None
        if spec is not None:
            return spec
    return None


class _CallbackLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, callback: Callable[[Any], None]) -> None:
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)  # torch's own import: its errors are the program's
        module.__loader__ = self._loader  # leave no trace of ours on the module
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._callback(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
