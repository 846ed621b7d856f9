"""TD010 follows the epoch helpers a main script imports from the project: ``main.py``'s loop
calls ``fit_epoch(...)`` from ``fitting.py`` (it steps and backpropagates, and calls
``net.train()`` first) and ``check_epoch(...)`` from ``checking.py`` (it calls ``net.eval()``).
With ``net.train()`` gone from ``fit_epoch``, only the first epoch trains in train mode."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

from support.lint import lint_files

FITTING = """
    def fit_epoch(epoch, loader, net, loss_fn, opt):
        net.train()
        for clips, labels in loader:
            loss = loss_fn(net(clips), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
"""

CHECKING = """
    import torch


    def check_epoch(epoch, loader, net, loss_fn):
        net.eval()
        total = 0.0
        with torch.no_grad():
            for clips, labels in loader:
                total += loss_fn(net(clips), labels).item()
        return total / len(loader)
"""

MAIN = """
    import torch
    from torch import nn

    from checking import check_epoch
    from fitting import fit_epoch


    def run(train_loader, val_loader, epochs):
        net = nn.Sequential(nn.Conv3d(3, 8, 3), nn.BatchNorm3d(8), nn.Flatten(), nn.LazyLinear(10))
        loss_fn = nn.CrossEntropyLoss()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for epoch in range(epochs):
            fit_epoch(epoch, train_loader, net, loss_fn, opt)
            check_epoch(epoch, val_loader, net, loss_fn)
"""


def td010(root: Path, files: Dict[str, str]) -> List[Tuple[str, int]]:
    found = []
    for name, result in lint_files(root, files).items():
        assert result.internal_errors == []
        found += [(name, f.line) for f in result.all if f.rule_id == "TD010"]
    return found


def test_helpers_that_switch_back_to_train_are_quiet(tmp_path) -> None:
    assert td010(tmp_path, {"fitting.py": FITTING, "checking.py": CHECKING, "main.py": MAIN}) == []


def test_train_removed_from_the_imported_epoch_helper_is_reported_at_the_loop(tmp_path) -> None:
    fitting = FITTING.replace("        net.train()\n", "")
    assert td010(tmp_path, {"fitting.py": fitting, "checking.py": CHECKING, "main.py": MAIN}) == [("main.py", 14)]


def test_a_missing_helper_file_says_nothing(tmp_path) -> None:
    assert td010(tmp_path, {"checking.py": CHECKING, "main.py": MAIN}) == []
