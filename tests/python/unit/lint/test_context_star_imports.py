"""Torch names that come through ``from helpers import *`` (lint/context.py, project.py): a
tutorial's evaluation script imports nothing but its helpers module, which imports torch, and
then writes ``with torch.no_grad():`` — that is torch's ``no_grad``, as if imported directly.
The loop without it is still reported; a name the script binds itself is not taken from the
helpers; nothing is guessed for a file linted without a path (no project to read)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

from torchdoctor.lint import lint_source
from torchdoctor.lint import project as P

HELPERS = """
import os

import torch
import torch.nn.functional as F


def count_hits(scores, labels):
    return (scores.argmax(1) == labels).sum().item()
"""

EVALUATE = """
from helpers import *


def evaluate(test_loader, model):
    model.eval()
    hits = 0
{loop}
    return hits


saved = torch.load("best.pt", weights_only=False)
model = saved["model"]
print(evaluate(torch.utils.data.DataLoader(range(10), batch_size=2), model))
"""

GUARDED = """\
    with torch.no_grad():
        for images, labels in test_loader:
            hits += count_hits(model(images), labels)"""

UNGUARDED = """\
    for images, labels in test_loader:
        hits += count_hits(model(images), labels)"""


def write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def td009(path: Path) -> List[Tuple[str, int]]:
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source(path.read_text(encoding="utf-8"), str(path))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    return [(f.rule_id, f.line) for f in result.all if f.rule_id == "TD009"]


def test_no_grad_through_a_star_import_is_torch_no_grad(tmp_path):
    write(tmp_path, {"helpers.py": HELPERS, "evaluate.py": EVALUATE.format(loop=GUARDED)})
    assert td009(tmp_path / "evaluate.py") == []


def test_the_loop_without_no_grad_is_still_reported(tmp_path):
    write(tmp_path, {"helpers.py": HELPERS, "evaluate.py": EVALUATE.format(loop=UNGUARDED)})
    assert td009(tmp_path / "evaluate.py") == [("TD009", 8)]


def test_a_name_the_file_binds_itself_is_not_taken_from_the_star_import(tmp_path):
    # ``torch`` here is the script's own object, whatever helpers.py imports under that name
    shadowed = EVALUATE.format(loop=GUARDED).replace("\n\n\ndef evaluate", "\n\ntorch = None\n\n\ndef evaluate", 1)
    write(tmp_path, {"helpers.py": HELPERS, "evaluate.py": shadowed})
    result = lint_source((tmp_path / "evaluate.py").read_text(encoding="utf-8"), str(tmp_path / "evaluate.py"))
    assert result.internal_errors == []
    # the module-level ``torch`` is a plain name: ``torch.no_grad`` is no grad mode, so the loop counts
    assert [f.rule_id for f in result.all if f.rule_id == "TD009"] == ["TD009"]


def test_a_file_linted_without_a_path_guesses_nothing():
    result = lint_source(textwrap.dedent(EVALUATE.format(loop=GUARDED)).lstrip("\n"))
    assert result.internal_errors == []
    assert [f.rule_id for f in result.all if f.rule_id == "TD009"] == ["TD009"]
