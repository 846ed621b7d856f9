"""TD012 through ``from module import *`` takes the name from where Python would: of the star
imports that bring it, the last one wins; a module with a literal ``__all__`` exports only what
it lists, and one without exports no ``_private`` name. A helper that can fall off its end is
blamed only when the caller really gets it."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from torchdoctor.lint import lint_source
from torchdoctor.lint import project as P

GAPPY = """
import torch
{all}

def {name}(path):
    if path.endswith(".pt"):
        return torch.load(path, weights_only=True)
"""

SOLID = """
import torch


def {name}(path):
    return torch.load(path, weights_only=True)
"""


def write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def td012_lines(path: Path) -> List[Tuple[int, str]]:
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source(path.read_text(encoding="utf-8"), str(path))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    return [(f.line, f.severity) for f in result.all if f.rule_id == "TD012"]


def caller(first: str, second: str, name: str = "fetch") -> str:
    return f"from {first} import *\nfrom {second} import *\n\nbatch = {name}('a.pt').unsqueeze(0)\n"


def test_the_last_star_import_of_a_name_wins(tmp_path):
    files = {"gappy.py": GAPPY.format(all="", name="fetch"), "solid.py": SOLID.format(name="fetch")}
    write(tmp_path, {**files, "run.py": caller("gappy", "solid")})
    assert td012_lines(tmp_path / "run.py") == []  # ``fetch`` is solid's
    write(tmp_path, {"run.py": caller("solid", "gappy")})
    assert td012_lines(tmp_path / "run.py") == [(4, "warning")]  # ``fetch`` is gappy's


@pytest.mark.parametrize(
    ("all_line", "reaches"),
    [
        ('__all__ = ["other"]', False),  # listed elsewhere: not exported
        ("__all__ = ('fetch',)", True),
        ('__all__ = ["other"]\n__all__ += ["fetch"]', True),
        ("__all__ = [n for n in dir() if n.startswith('f')]", True),  # not a literal: the _ rule
    ],
)
def test_a_literal_all_decides_what_a_star_import_brings(tmp_path, all_line, reaches):
    files = {"gappy.py": GAPPY.format(all=all_line + "\n", name="fetch"), "solid.py": SOLID.format(name="fetch")}
    write(tmp_path, {**files, "run.py": caller("solid", "gappy")})
    assert td012_lines(tmp_path / "run.py") == ([(4, "warning")] if reaches else [])


def test_a_private_name_is_not_star_exported(tmp_path):
    # ``_fetch`` is not gappy's here (a NameError when run): the helper is not blamed for it
    files = {"gappy.py": GAPPY.format(all="", name="_fetch"), "solid.py": SOLID.format(name="fetch")}
    write(tmp_path, {**files, "run.py": caller("solid", "gappy", "_fetch")})
    assert td012_lines(tmp_path / "run.py") == []
    assert td012_lines(tmp_path / "gappy.py") == [(4, "information")]
