"""`torchdoctor --version` and `torchdoctor doctor`, run as a user runs them (real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from torchdoctor import __version__, doctor

BACKEND = Path(__file__).resolve().parents[3] / "pybackend"


def _run(python: str, *args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(BACKEND), "PATH": "/usr/bin:/bin"}
    return subprocess.run([python, "-m", "torchdoctor", *args], capture_output=True, text=True, env=env, timeout=120)


def test_version():
    r = _run(sys.executable, "--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"torchdoctor {__version__}"


def test_doctor_reports_torch_and_is_ready():
    r = _run(sys.executable, "doctor")
    assert r.returncode == 0, r.stderr
    import torch

    assert f"torch    {torch.__version__}" in r.stdout
    assert "cuda" in r.stdout and "Ready." in r.stdout


def test_doctor_json_lists_every_probe():
    r = _run(sys.executable, "doctor", "--json")
    data = json.loads(r.stdout)
    names = [f["name"] for f in data["findings"]]
    assert names == ["python", "torch", "cuda", "numpy", "debugpy", "runtime"]
    assert all(f["ok"] for f in data["findings"] if f["name"] in doctor.ESSENTIAL)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A real interpreter without torch: a fresh venv with nothing installed."""
    d = tmp_path_factory.mktemp("bare-venv")
    venv.create(d, with_pip=False)
    return str(d / "bin" / "python")


def test_doctor_without_torch_says_how_to_fix(bare_python: str):
    r = _run(bare_python, "doctor")
    assert r.returncode == 1
    assert "!! torch" in r.stdout
    assert f"fix: install it into this interpreter: {bare_python} -m pip install torch" in r.stdout
    assert "Not ready: torch" in r.stdout


def test_no_command_prints_usage_and_exits_2():
    r = _run(sys.executable)
    assert r.returncode == 2
    assert "doctor" in r.stderr
