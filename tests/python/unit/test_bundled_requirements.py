"""The libraries shipped inside the .vsix are pinned fully and import on the oldest Pythons we support.

pybackend/requirements-bundled*.txt list every distribution the bundle holds (the make target
installs them with ``pip install --target --python-version 3.9``), each as ``name==version``:
two builds ship the same bytes. pip evaluates environment markers against the interpreter that
runs it, not ``--python-version``, so cattrs's ``exceptiongroup; python_version < '3.11'`` must be
listed by hand, without a marker, or the backend fails to start on 3.9 and 3.10.

On every supported Python (pyenv's 3.9 to 3.13) the extension's own preflight
(extension/src/backend/preflight.py, the one copy, inlined into the extension by esbuild) passes
against the bundle and the server it would start answers an LSP session and exits cleanly; a bundle
without exceptiongroup fails that preflight on 3.10, naming the module (issue 16).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import make_test_lsp_client

from support.paths import PYBACKEND, REPO
from torchdoctor.server import protocol

REQUIREMENTS = sorted(PYBACKEND.glob("requirements-bundled*.txt"))
BUNDLE = REPO / "extension" / "bundled" / "libs"
PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
# The one copy of the preflight script: the extension inlines it (preflightCheck.ts), we run it.
PREFLIGHT = REPO / "extension" / "src" / "backend" / "preflight.py"
ENTRY_POINT = PYBACKEND / "torchdoctor" / "server" / "__main__.py"
SUPPORTED = ["3.9", "3.10", "3.11", "3.12", "3.13"]  # README: Python >= 3.9


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


def pyenv_python(version: str) -> Path:
    """pyenv's newest CPython ``version``.N (not a free-threaded or pre-release build); else skip."""
    found = [
        p for p in PYENV.glob(f"{version}.*/bin/python") if re.fullmatch(rf"{re.escape(version)}\.\d+", p.parts[-3])
    ]
    if not found:
        pytest.skip(f"needs pyenv's Python {version} (under {PYENV})")
    return max(found, key=lambda p: int(p.parts[-3].rsplit(".", 1)[1]))


def server_env(bundle: Path) -> dict:
    """What the extension gives the backend (backend.ts serverEnv): the bundle, then pybackend."""
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(bundle), str(PYBACKEND)]),
        PYTHONNOUSERSITE="1",
        PYTHONDONTWRITEBYTECODE="1",  # five Pythons leave no caches in the bundle the .vsix is made from
    )


def run_preflight(python: Path, bundle: Path) -> dict:
    """The extension's preflight, as backend.ts runs it: ``python -c <preflight.py>``; its JSON report."""
    proc = subprocess.run(
        [str(python), "-c", PREFLIGHT.read_text(encoding="utf-8")],
        env=server_env(bundle),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def entry_point_imports() -> set:
    """The first-party modules ``python -m torchdoctor.server`` imports (torchdoctor/server/__main__.py)."""
    package = "torchdoctor.server"

    def is_module(name: str) -> bool:
        path = PYBACKEND.joinpath(*name.split("."))
        return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

    found = set()
    for node in ast.walk(ast.parse(ENTRY_POINT.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found.add(module)
            # from . import log_bridge: a name may be a module of its own (or an attribute: __version__).
            found.update(f"{module}.{a.name}" for a in node.names if is_module(f"{module}.{a.name}"))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    # First-party only (sys.stdlib_module_names, which would filter the rest, is new in 3.10).
    return {name for name in found if name.split(".")[0] == "torchdoctor"}


def test_the_preflight_imports_what_the_server_entry_point_imports():
    """Importing a.b.c imports a and a.b too: every first-party import of __main__ is one of
    SERVER_MODULES or a package above one."""
    tree = ast.parse(PREFLIGHT.read_text(encoding="utf-8"))
    assigned = [
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id == "SERVER_MODULES"
    ]
    preflight = set(ast.literal_eval(assigned[0]))
    covered = preflight | {name.rsplit(".", depth)[0] for name in preflight for depth in range(1, name.count(".") + 1)}
    imported = entry_point_imports()
    assert "torchdoctor.server.app" in imported
    assert imported <= covered, imported - covered
    assert preflight <= imported, preflight - imported


@pytest.mark.parametrize("version", SUPPORTED)
async def test_the_bundle_passes_the_preflight_and_serves_lsp(version: str):
    """On each supported Python: the extension's own preflight passes against the bundle, then the
    server it would start answers initialize and exits cleanly after shutdown + exit."""
    python = pyenv_python(version)
    bundle = built_bundle()
    report = run_preflight(python, bundle)
    assert report["libs"] == "ok", report
    assert ".".join(map(str, report["version"][:2])) == version

    client = make_test_lsp_client()
    await client.start_io(str(python), "-m", "torchdoctor.server", "--stdio", env=server_env(bundle))
    try:
        # Ceilings for a loaded machine, not timing assertions (a start takes about a second).
        params = types.InitializeParams(capabilities=types.ClientCapabilities())
        result = await asyncio.wait_for(client.initialize_session(params), timeout=120)
        assert result.server_info is not None and result.server_info.name == protocol.SERVER_NAME
        await asyncio.wait_for(client.shutdown_session(), timeout=60)  # shutdown, exit, waits for the process
        server = client._server  # pytest-lsp keeps the process here; it has no public accessor
        assert server is not None and server.returncode == 0
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()  # a hung server fails the test above; do not wait on it here
        await client.stop()


def test_a_bundle_without_exceptiongroup_fails_the_preflight_on_3_10(tmp_path: Path):
    """cattrs needs exceptiongroup below 3.11: the preflight must say so, not pass and leave the
    server to die at start (issue 16)."""
    python = pyenv_python("3.10")
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('exceptiongroup') is None)"],
        env=dict(os.environ, PYTHONPATH="", PYTHONNOUSERSITE="1"),
        timeout=60,
    )
    if probe.returncode == 0:
        pytest.skip(f"{python} has exceptiongroup installed outside the bundle")
    bundle = tmp_path / "libs"
    shutil.copytree(
        built_bundle(), bundle, ignore=shutil.ignore_patterns("exceptiongroup", "exceptiongroup-*", "__pycache__")
    )
    report = run_preflight(python, bundle)
    assert report["libs"] != "ok"
    assert "exceptiongroup" in report["libs"]
    assert report["missing"] == "exceptiongroup"
    assert report["neededBy"].split(".")[0] == "cattrs"
    # The same bundle passes where the standard library has ExceptionGroup (3.11+).
    newer = [v for v in SUPPORTED if v not in ("3.9", "3.10") and list(PYENV.glob(f"{v}.*/bin/python"))]
    if newer:
        assert run_preflight(pyenv_python(newer[0]), bundle)["libs"] == "ok"
