"""Shared pieces for DAP tests and benches: where the backend lives, how the extension injects it.

A plain module (not a conftest), imported as ``from support.dap_env import ...``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

REPO = Path(__file__).resolve().parents[3]
PYBACKEND = REPO / "pybackend"
SAMPLES = REPO / "sample_workspace"


# extension/src/debug/runtimeInjection.ts CHILD_PROCESS_ENV: frozen modules off in the processes
# debugpy follows (test_dap_subprocess_pydevd.py reads both and compares them)
CHILD_PROCESS_ENV = {"PYTHON_FROZEN_MODULES": "off", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def injected_env(base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The debuggee environment the extension sets up: ``<ext>/pybackend`` first on PYTHONPATH,
    and ``CHILD_PROCESS_ENV``."""
    base = dict(os.environ if base is None else base)
    rest = base.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([str(PYBACKEND)] + ([rest] if rest else [])), **CHILD_PROCESS_ENV}


def plain_adapter_env() -> Dict[str, str]:
    """An environment with no trace of our backend on PYTHONPATH (plain debugpy)."""
    env = dict(os.environ)
    paths = [p for p in env.pop("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != PYBACKEND]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def marked_line(path: Path, marker: str) -> int:
    """The 1-based number of the first line of ``path`` containing ``marker``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if marker in line:
            return number
    raise AssertionError(f"{marker!r} not found in {path}")
