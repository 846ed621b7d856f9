"""TD010 and an averaged copy evaluated by an epoch helper. ``shadow = copy.deepcopy(net)`` is
handed to ``score_epoch(...)``, which calls ``.eval()`` on what it gets; the optimizer tunes
``net`` only, and ``net`` goes to the training helper. The copy is never trained, so its eval
mode harms nothing: quiet whether the helpers live in this file or in another one. Handing
``net`` itself to the scoring helper, with nothing switching it back, is still reported."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from support.lint import hits, lint_files

TRAINING = """
def train_epoch(rows, net, crit, optim):
    for feats, target in rows:
        optim.zero_grad()
        crit(net(feats), target).backward()
        optim.step()
"""

SCORING = """
import torch


def score_epoch(rows, net, crit):
    net.eval()
    with torch.no_grad():
        return sum(crit(net(feats), target).item() for feats, target in rows)
"""

MAIN = """
import copy

import torch
from torch import nn
{imports}

def run(train_rows, val_rows, epochs):
    net = nn.Sequential(nn.Linear(10, 20), nn.BatchNorm1d(20), nn.Dropout(0.2), nn.Linear(20, 4))
    shadow = copy.deepcopy(net)
    crit = nn.CrossEntropyLoss()
    optim = torch.optim.AdamW(net.parameters(), lr=1e-3)
    net.train()
    for epoch in range(epochs):
        train_epoch(train_rows, net, crit, optim)
        score_epoch(val_rows, {scored}, crit)
"""

IMPORTS = "from training import train_epoch\nfrom scoring import score_epoch\n"


def across_files(root: Path, scored: str) -> List[Tuple[str, int]]:
    files: Dict[str, str] = {
        "training.py": TRAINING,
        "scoring.py": SCORING,
        "main.py": MAIN.format(imports=IMPORTS, scored=scored),
    }
    found = []
    for name, result in lint_files(root, files).items():
        assert result.internal_errors == []
        found += [(name, f.line) for f in result.all if f.rule_id == "TD010"]
    return found


def in_one_file(scored: str) -> List[int]:
    text = MAIN.format(imports="", scored=scored) + TRAINING + SCORING
    return [line for rule, line in hits(text) if rule == "TD010"]


def test_the_copy_scored_by_a_helper_of_another_file_is_quiet(tmp_path) -> None:
    assert across_files(tmp_path, "shadow") == []


def test_the_trained_net_scored_by_a_helper_of_another_file_is_reported(tmp_path) -> None:
    assert across_files(tmp_path, "net") == [("main.py", 17)]


@pytest.mark.parametrize("scored, expected", [("shadow", []), ("net", [15])])
def test_helpers_of_the_same_file(scored, expected) -> None:
    assert in_one_file(scored) == expected
