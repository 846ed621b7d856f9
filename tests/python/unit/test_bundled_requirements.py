"""The libraries shipped inside the .vsix are pinned fully and import on the oldest Pythons we support.

pybackend/requirements-bundled*.txt list every distribution the bundle holds (the make target
installs them with ``pip install --target --python-version 3.9``), each as ``name==version``:
two builds ship the same bytes. pip evaluates environment markers against the interpreter that
runs it, not ``--python-version``, so cattrs's ``exceptiongroup; python_version < '3.11'`` must be
listed by hand, without a marker, or the backend fails to start on 3.9 and 3.10.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from support.paths import PYBACKEND, REPO

REQUIREMENTS = sorted(PYBACKEND.glob("requirements-bundled*.txt"))
BUNDLE = REPO / "extension" / "bundled" / "libs"
PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


def built_bundle() -> Path:
    """The bundle make built, when it was built from the current requirement files; else skip."""
    if not BUNDLE.is_dir():
        pytest.skip("extension/bundled/libs is built by make build")
    built_at = min(p.stat().st_mtime for p in BUNDLE.glob("*.dist-info")) if any(BUNDLE.glob("*.dist-info")) else 0
    if any(path.stat().st_mtime > built_at for path in REQUIREMENTS):
        pytest.skip("extension/bundled/libs is older than the requirement files: make build rebuilds it")
    return BUNDLE


def pins(path: Path) -> dict:
    found = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)", line)
            assert match, f"{path.name}: {raw!r} is not pinned as name==version"
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def test_every_bundled_library_is_pinned():
    assert REQUIREMENTS
    pinned = {}
    for path in REQUIREMENTS:
        pinned.update(pins(path))
    for name in ("pygls", "lsprotocol", "attrs", "cattrs", "typing-extensions", "exceptiongroup", "debugpy"):
        assert name in pinned, name


def test_the_built_bundle_holds_exactly_the_pins():
    bundle = built_bundle()
    pinned = {}
    for path in REQUIREMENTS:
        pinned.update(pins(path))
    built = {}
    for info in bundle.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].rpartition("-")
        built[name.lower().replace("_", "-")] = version
    assert built == pinned


@pytest.mark.parametrize("version", ["3.9", "3.10"])
def test_the_bundle_imports_on_old_pythons(version: str):
    pythons = sorted(PYENV.glob(f"{version}.*/bin/python")) if PYENV.is_dir() else []
    if not pythons:
        pytest.skip(f"needs pyenv's Python {version}")
    bundle = built_bundle()
    code = "import cattrs, lsprotocol.types, pygls.lsp.server, torchdoctor.server.protocol; print('ok')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(bundle), str(PYBACKEND)]), PYTHONNOUSERSITE="1")
    proc = subprocess.run([str(pythons[-1]), "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr
