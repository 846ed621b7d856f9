"""Every ``torchDoctor.*`` name the docs tell a user to set or run exists in package.json.

A setting spelled wrong in README (``torchDoctor.monitor.enabled`` for ``.enable``) is a silent
no-op for the user who copies it: VS Code keeps unknown keys without a word.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", ROOT / "extension" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NAME = re.compile(r"torchDoctor\.[A-Za-z0-9_.]*[A-Za-z0-9_]")


def _declared() -> set[str]:
    contributes = json.loads((ROOT / "package.json").read_text())["contributes"]
    configuration = contributes["configuration"]
    sections = configuration if isinstance(configuration, list) else [configuration]
    names = {key for section in sections for key in section.get("properties", {})}
    names |= {c["command"] for c in contributes.get("commands", [])}
    names |= {v["id"] for views in contributes.get("views", {}).values() for v in views}
    return names


def _mentioned() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        if doc.exists():
            for name in NAME.findall(doc.read_text()):
                found.setdefault(name, []).append(doc.relative_to(ROOT).as_posix())
    return found


def test_the_docs_name_settings_and_commands_that_exist():
    declared = _declared()
    # A group ("torchDoctor.diagnosis" for its thresholds) is fine when settings live under it.
    unknown = {
        name: docs
        for name, docs in _mentioned().items()
        if name not in declared and not any(d.startswith(name + ".") for d in declared)
    }
    assert not unknown, f"names in the docs that package.json does not declare: {unknown}"


def test_the_check_sees_the_settings():
    declared = _declared()
    assert "torchDoctor.monitor.enable" in declared and "torchDoctor.python" in declared
    assert len(_mentioned()) >= 10
