"""Where things are, from the repository root down."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PYBACKEND = REPO / "pybackend"
SAMPLES = REPO / "sample_workspace"
BENCH = REPO / "bench"
