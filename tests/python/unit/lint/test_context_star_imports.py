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


# -- a name the helpers module rebinds after importing it -----------------------------------

LOADERS = """
import functools

from torch.utils.data import DataLoader
{rebind}
"""

FIT = """
from loaders import *
import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters())
batches = DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 3), torch.randn(64, 1)), batch_size=16)
for epoch in range(5):
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def td017(tmp_path: Path, rebind: str) -> List[Tuple[str, int]]:
    write(tmp_path, {"loaders.py": LOADERS.format(rebind=rebind), "fit.py": FIT})
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source((tmp_path / "fit.py").read_text(encoding="utf-8"), str(tmp_path / "fit.py"))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    return [(f.rule_id, f.line) for f in result.all if f.rule_id == "TD017"]


def test_a_torch_class_the_helpers_only_import_is_torch_s(tmp_path):
    # ``DataLoader`` reaches fit.py as torch's own class: its loader keeps the stored order
    assert td017(tmp_path, "") == [("TD017", 6)]


def test_a_torch_class_the_helpers_rebind_with_a_partial_is_not_torch_s(tmp_path):
    # the project's own ``DataLoader`` shuffles every loader it builds: nothing to report
    assert td017(tmp_path, "DataLoader = functools.partial(DataLoader, shuffle=True)") == []


def test_a_torch_class_the_helpers_replace_with_a_function_is_not_torch_s(tmp_path):
    wrapper = "\n\ndef DataLoader(dataset, **options):\n    return functools.partial(dataset, **options)\n"
    assert td017(tmp_path, wrapper) == []


def test_a_torch_class_the_helpers_import_again_from_elsewhere_is_not_torch_s(tmp_path):
    assert td017(tmp_path, "from shuffled_loaders import DataLoader") == []


def test_a_torch_class_a_helpers_function_rebinds_globally_is_not_torch_s(tmp_path):
    patched = "\n\ndef patch():\n    global DataLoader\n    DataLoader = functools.partial(DataLoader, shuffle=True)\n"
    assert td017(tmp_path, patched) == []
