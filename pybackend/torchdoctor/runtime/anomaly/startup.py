"""Turning the watch on inside the user's program, with no change to their code.

:func:`runtime.startup.activate` (the pydevd plugin's one entry point) and ``torchdoctor run`` call
:func:`activate`. If ``TORCHDOCTOR_ANOMALY`` is unset, nothing happens. Otherwise the watch is
registered with :func:`runtime.startup.when_torch_imported`, the runtime's one "when torch is
imported" registry: installed now if torch is already in ``sys.modules`` (attach), else right
after the program's own ``import torch`` has run torch's ``__init__`` (after any installer
registered before it, such as the collection). A program that never imports torch never gets it
from us. Stdlib only; never raises.
"""

from __future__ import annotations

import os
from typing import Callable, Mapping, Optional

from .. import startup as runtime_startup
from .config import OFF, AnomalyConfig, from_env

NAME = "anomaly"  # our name in runtime.startup's registry
_STATE: dict = {"activated": False, "problems": []}


def activate(
    environ: Optional[Mapping[str, str]] = None,
    on_break: Optional[Callable] = None,
    config: Optional[AnomalyConfig] = None,
) -> bool:
    """Arrange for the watch; True if it is (or will be, at ``import torch``) installed."""
    try:
        config = config or from_env(os.environ if environ is None else environ)
        if config is None or config.mode == OFF or _STATE["activated"]:
            return False
        _STATE["activated"] = True
        _STATE["problems"] = list(config.problems)
        return runtime_startup.when_torch_imported(NAME, lambda torch: _install(config, on_break))
    except Exception as exc:
        _STATE["problems"].append(f"activation failed: {type(exc).__name__}: {exc}")
        return False


def problems() -> list:
    """Settings that were ignored, and anything that kept the watch from installing."""
    return list(_STATE["problems"])


def reset() -> None:
    """Forget an activation, and our wait for torch if any (tests, ``torchdoctor run``)."""
    _STATE["activated"] = False
    runtime_startup.forget(NAME)


def _install(config: AnomalyConfig, on_break: Optional[Callable]) -> None:
    try:
        from . import watch

        watch.install(config, on_break=on_break)
    except Exception as exc:
        _STATE["problems"].append(f"the anomaly watch could not start: {type(exc).__name__}: {exc}")
