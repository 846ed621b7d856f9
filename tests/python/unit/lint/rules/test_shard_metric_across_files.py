"""TD020 follows a sharded loader built in another file: ``data/build.py`` returns it in a tuple
(through a package wrapper, as Swin-Transformer's ``data.build_loader`` does), ``main.py`` unpacks
it and evaluates on it without reducing."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

from torchdoctor.lint import lint_source, sharded
from torchdoctor.lint import project as P
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.source import SourceText

BUILD = """
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler


    def build_loader(batch_size):
        train_set = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
        val_set = TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,)))
        train_loader = DataLoader(train_set, batch_size=batch_size, sampler=DistributedSampler(train_set))
        val_loader = DataLoader(val_set, batch_size=batch_size, sampler=DistributedSampler(val_set, shuffle=False))
        return train_set, train_loader, val_loader
"""

WRAPPER = """
    from .build import build_loader as _build_loader


    def build_loader(batch_size, pretrain=False):
        return _build_loader(batch_size)
"""

MAIN = """
    import torch
    import torch.distributed as dist
    from torch import nn

    from data import build_loader


    @torch.no_grad()
    def validate(loader, model):
        model.eval()
        correct, seen = 0, 0
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            seen += len(y)
        {reduce}print(f"val accuracy {{correct / seen:.3f}}")


    def main():
        dataset, train_loader, val_loader = build_loader(16)
        validate(val_loader, nn.Linear(8, 2))
"""


def write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def td020(path: Path) -> List[Tuple[int, str, str]]:
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source(path.read_text(encoding="utf-8"), str(path))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    return [(f.line, f.severity, f.message) for f in result.all if f.rule_id == "TD020"]


def test_a_loader_from_another_file_through_a_wrapper_is_followed(tmp_path) -> None:
    files = {"data/__init__.py": WRAPPER, "data/build.py": BUILD, "main.py": MAIN.format(reduce="")}
    ((line, severity, message),) = td020(write(tmp_path, files) / "main.py")
    assert (line, severity) == (15, "information")
    assert "`DistributedSampler` (line 10 of build.py)" in message


def test_reduced_sums_are_quiet_across_files_too(tmp_path) -> None:
    reduce = (
        "t = torch.tensor([correct, seen])\n        dist.all_reduce(t)\n        correct, seen = t.tolist()\n        "
    )
    files = {"data/__init__.py": WRAPPER, "data/build.py": BUILD, "main.py": MAIN.format(reduce=reduce)}
    assert td020(write(tmp_path, files) / "main.py") == []


def test_a_loader_built_through_a_module_attribute_is_followed(tmp_path) -> None:
    """``import data`` then ``data.build_loader(...)``: the call's leftmost name is the import
    (the rule passes over calls whose leftmost name is no import of the project's)."""
    main = (
        MAIN.format(reduce="")
        .replace("from data import build_loader", "import data")
        .replace("= build_loader(16)", "= data.build_loader(16)")
    )
    files = {"data/__init__.py": WRAPPER, "data/build.py": BUILD, "main.py": main}
    ((line, severity, message),) = td020(write(tmp_path, files) / "main.py")
    assert (line, severity) == (15, "information")
    assert "`DistributedSampler` (line 10 of build.py)" in message


def test_a_script_that_imports_only_torch_is_passed_over_without_its_calls() -> None:
    """No import but torch's: no call can name a function of another file, so the rule does not
    look at the script's calls one by one (a 32k-line script: 42 -> 11 ms for this rule)."""
    text = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(range(4))\n"
    ctx = LintContext(ast.parse(text), SourceText(text), "main.py")
    assert sharded._project_roots(ctx) == set()
    assert list(sharded._imported(ctx)) == []
    text = "import numpy as np\nimport data\nfrom utils import build as b\n" + text
    ctx = LintContext(ast.parse(text), SourceText(text), "main.py")
    assert sharded._project_roots(ctx) == {"np", "data", "b"}
