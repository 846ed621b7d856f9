"""The import rules each package's ``__init__.py`` states, checked on the sources and in a fresh process.

- ``runtime/`` (inside the user's program) imports nothing from ``server/``, ``checks/``, ``lint/``
  or ``diagnosis/``, at any depth of a function;
- ``server/``, ``lint/``, ``diagnosis/`` and ``checks/`` never import torch or numpy at module
  level (the backend runs without torch; the checks' workers import it inside functions);
  ``diagnosis/`` never imports torch at all;
- ``server/`` never imports ``runtime/``, directly or through what it imports: importing the
  server leaves no ``torch`` and no ``torchdoctor.runtime`` in ``sys.modules``;
- ``checks/`` imports nothing from ``server/``, ``lint/`` or ``diagnosis/``; ``diagnosis/`` and
  ``lint/`` import nothing from ``runtime/``, ``server/`` or ``checks/``;
- ``spelling.py``, used by all of them, imports the standard library only;
- inside ``runtime/``: ``stats/`` imports nothing else of torchdoctor; ``summary/`` imports only
  ``stats/``; ``collect/`` only ``stats/`` and ``summary/``; ``anomaly/`` only ``summary/`` and
  ``startup.py`` (each may also import ``spelling``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from support.paths import PYBACKEND

PACKAGE = PYBACKEND / "torchdoctor"
HEAVY = ("torch", "numpy")


def modules(package: str) -> List[Path]:
    root = PACKAGE / package
    return sorted(root.rglob("*.py")) if root.is_dir() else [PACKAGE / f"{package}.py"]


def dotted(path: Path) -> str:
    parts = list(path.relative_to(PYBACKEND).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, module_level_only: bool = False) -> Iterator[Tuple[int, str]]:
    """(line, absolute module name) of every import in the file; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = dotted(path) if path.name == "__init__.py" else dotted(path).rpartition(".")[0]
    nodes = module_level_nodes(tree) if module_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # ``from . import checks`` names a module too
                yield node.lineno, f"{target}.{alias.name}"


def module_level_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Statements run at import time: the module body, into if/try/with blocks, not into defs."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.ClassDef):
            todo.extend(n for n in node.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
            continue
        todo.extend(ast.iter_child_nodes(node))


def offenders(package: str, forbidden: Tuple[str, ...], module_level_only: bool = False) -> List[str]:
    found = []
    for path in modules(package):
        for line, name in imports(path, module_level_only):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(PYBACKEND)}:{line} imports {name}")
    return found


def test_the_rules_see_the_packages():
    """Guard against a rule passing because it found nothing to check."""
    for package in ("runtime", "server", "lint", "diagnosis", "checks"):
        assert len(modules(package)) >= 5, package
    names = {name for path in modules("runtime") for _, name in imports(path)}
    assert "torchdoctor.runtime.stats.tensor_stats" in names  # relative imports are resolved
    assert "torchdoctor.runtime.summary.tensor_info" in names  # and imports inside functions (summary/api.py)


def test_runtime_imports_nothing_from_the_backend():
    assert (
        offenders("runtime", ("torchdoctor.server", "torchdoctor.checks", "torchdoctor.lint", "torchdoctor.diagnosis"))
        == []
    )


@pytest.mark.parametrize("package", ["server", "lint", "diagnosis", "checks"])
def test_backend_packages_never_import_torch_at_module_level(package: str):
    assert offenders(package, HEAVY, module_level_only=True) == []


def test_diagnosis_never_imports_torch_anywhere():
    assert offenders("diagnosis", HEAVY) == []


def test_checks_import_no_server_lint_or_diagnosis():
    assert offenders("checks", ("torchdoctor.server", "torchdoctor.lint", "torchdoctor.diagnosis")) == []


def test_diagnosis_and_lint_import_no_runtime_and_no_server():
    for package in ("diagnosis", "lint"):
        assert offenders(package, ("torchdoctor.runtime", "torchdoctor.server", "torchdoctor.checks")) == [], package


def test_server_never_imports_the_runtime():
    assert offenders("server", ("torchdoctor.runtime",)) == []


# runtime subpackage -> the other runtime parts it may import (besides itself and ``spelling``).
RUNTIME_LAYERS = {
    "stats": (),
    "summary": ("stats",),
    "collect": ("stats", "summary"),
    "anomaly": ("summary", "startup"),
}


@pytest.mark.parametrize("sub", sorted(RUNTIME_LAYERS))
def test_runtime_subpackages_import_only_their_layers(sub: str):
    own = f"torchdoctor.runtime.{sub}"
    allowed = [own, "torchdoctor.spelling"] + [f"torchdoctor.runtime.{a}" for a in RUNTIME_LAYERS[sub]]
    found = [
        f"{path.relative_to(PYBACKEND)}:{line} imports {name}"
        for path in modules(f"runtime/{sub}")
        for line, name in imports(path)
        if name.startswith("torchdoctor.")
        and not any(name == a or name.startswith(a + ".") for a in allowed)
        # ``from .. import startup`` also yields the package itself: the name that follows is checked
        and name != "torchdoctor.runtime"
    ]
    assert found == []


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is new in Python 3.10")
def test_spelling_is_stdlib_only():
    names = [name for _, name in imports(PACKAGE / "spelling.py")]
    assert names and all(name.split(".")[0] in sys.stdlib_module_names for name in names), names


def fresh_process_finds_none(code: str) -> None:
    """Run ``code`` (which computes a list ``bad``) in a new interpreter; it must find none."""
    code += "print(bad)\nsys.exit(1 if bad else 0)\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(PYBACKEND), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_importing_the_server_loads_no_torch_and_no_runtime():
    """The same rule through every transitive import, in a process of its own."""
    code = (
        "import sys\n"
        "import torchdoctor.server.app, torchdoctor.server.__main__\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy') or m.startswith('torchdoctor.runtime'))\n"
    )
    fresh_process_finds_none(code)


def test_the_runtime_loads_without_the_backend():
    """Importing every runtime module pulls in no server, lint, checks or diagnosis module."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import torchdoctor.runtime as r\n"
        "for m in pkgutil.walk_packages(r.__path__, 'torchdoctor.runtime.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[:2] in (['torchdoctor', 'server'], ['torchdoctor', 'lint'],"
        " ['torchdoctor', 'checks'], ['torchdoctor', 'diagnosis']))\n"
    )
    fresh_process_finds_none(code)
