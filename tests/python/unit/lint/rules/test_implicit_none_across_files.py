"""TD012 follows a helper across the import: a function of ``utils.py`` that returns a tensor
on some paths and falls off its end on another, used as a tensor in ``train.py`` without a
None check, is reported in both files: at the use in ``train.py`` (naming the helper's file,
as a path from the caller's folder, and its line) and at the helper in ``utils.py`` (naming
the caller's file and line). Imports by name, module, relative path, star and package
re-export all lead to the helper; a local name that shadows the import does not."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from torchdoctor.lint import lint_source
from torchdoctor.lint import project as P

HELPER = """
    import torch


    def style_vector(meta):
        if "text" in meta:
            return torch.tanh(torch.randn(4))
        if "preset" in meta:
            return torch.zeros(4)
"""

HEALTHY_HELPER = HELPER + "        return torch.ones(4)\n"

CALLER = """
    import torch
    from {module} import style_vector


    def run(prompt):
        vec = style_vector(prompt)
        return vec.unsqueeze(0)
"""


def write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def td012(path: Path) -> List[Tuple[int, str, str]]:
    """(line, severity, message) of the TD012 findings in ``path``, with a fresh project index."""
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source(path.read_text(encoding="utf-8"), str(path))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    return [(f.line, f.severity, f.message) for f in result.all if f.rule_id == "TD012"]


def test_the_use_in_the_caller_file_names_the_helper_and_its_file(tmp_path):
    root = write(tmp_path, {"utils.py": HELPER, "train.py": CALLER.format(module="utils")})
    ((line, severity, message),) = td012(root / "train.py")
    assert (line, severity) == (7, "warning")
    assert message.startswith("`vec.unsqueeze(0)` uses the result of `style_vector()` (utils.py line 4)")
    assert 'when `if "preset" in meta` is false' in message


def test_the_helper_names_the_caller_in_the_other_file(tmp_path):
    root = write(tmp_path, {"utils.py": HELPER, "train.py": CALLER.format(module="utils")})
    ((line, severity, message),) = td012(root / "utils.py")
    assert (line, severity) == (4, "warning")
    assert "`vec.unsqueeze(0)` in train.py (line 7) uses the result as a tensor" in message


def test_a_module_import_and_a_direct_use_of_the_call(tmp_path):
    caller = "import torch\nimport utils\n\n\ndef run(p):\n    return utils.style_vector(p).norm()\n"
    root = write(tmp_path, {"utils.py": HELPER, "train.py": caller})
    ((line, _, message),) = td012(root / "train.py")
    assert line == 6 and "`utils.style_vector(p).norm()` uses the result" in message


def test_a_relative_import_inside_a_package_and_a_caller_above_the_package(tmp_path):
    root = write(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/helpers.py": HELPER,
            "lib/run.py": CALLER.format(module=".helpers"),
            "train.py": "import torch\nfrom lib.helpers import style_vector\n\nx = style_vector({}) + 1\n",
        },
    )
    assert [line for line, _, _ in td012(root / "lib" / "run.py")] == [7]
    assert [line for line, _, _ in td012(root / "train.py")] == [4]
    ((line, _, message),) = td012(root / "lib" / "helpers.py")
    assert line == 4 and ("in run.py (line 7)" in message or "in train.py (line 4)" in message)


@pytest.mark.parametrize(
    "use",
    [
        "vec = style_vector(p)\n    if vec is None:\n        return None\n    return vec.unsqueeze(0)",
        "vec = style_vector(p)\n    return vec if vec is not None else torch.zeros(4)",
        "return style_vector(p) or torch.zeros(4)",
    ],
)
def test_a_caller_that_checks_for_none_is_fine_in_both_files(tmp_path, use):
    caller = f"import torch\nfrom utils import style_vector\n\n\ndef run(p):\n    {use}\n"
    root = write(tmp_path, {"utils.py": HELPER, "train.py": caller})
    assert td012(root / "train.py") == []
    assert td012(root / "utils.py") == []  # a checked caller: not even the information


def test_a_helper_that_always_returns_is_fine(tmp_path):
    root = write(tmp_path, {"utils.py": HEALTHY_HELPER, "train.py": CALLER.format(module="utils")})
    assert td012(root / "train.py") == [] and td012(root / "utils.py") == []


def test_a_local_function_of_the_same_name_is_not_the_imported_one(tmp_path):
    caller = (
        "import torch\nfrom utils import style_vector as _unused\n\n\n"
        "def style_vector(meta):\n    return torch.ones(4)\n\n\nvec = style_vector({}).unsqueeze(0)\n"
    )
    root = write(tmp_path, {"utils.py": HELPER, "train.py": caller})
    assert td012(root / "train.py") == []


def test_without_any_caller_in_the_project_it_stays_information(tmp_path):
    root = write(tmp_path, {"utils.py": HELPER, "other.py": "import torch\nprint('style_vector')\n"})
    ((_, severity, message),) = td012(root / "utils.py")
    assert severity == "information" and "No caller in this project" in message


# A data-loading helper of the kind a segmentation project keeps in ``data_utils.py``: the mask
# file may be missing, and that path falls off the end.
MASK_HELPER = """
    import os

    import torch


    def load_mask(path, size):
        if os.path.exists(path):
            mask = torch.load(path)
            return mask[:size, :size]
"""


def test_a_caller_that_does_not_import_torch_itself(tmp_path):
    caller = """
        from data_utils import load_mask


        def area(path):
            mask = load_mask(path, 64)
            return mask.sum() / mask.numel()
    """
    root = write(tmp_path, {"data_utils.py": MASK_HELPER, "measure.py": caller})
    ((line, severity, message),) = td012(root / "measure.py")
    assert (line, severity) == (6, "warning")
    assert message.startswith("`mask.sum()` uses the result of `load_mask()` (data_utils.py line 6)")


def test_a_star_import_in_the_caller_is_followed_both_ways(tmp_path):
    caller = """
        import torch
        from data_utils import *


        class MaskedSet(torch.utils.data.Dataset):
            def __getitem__(self, i):
                mask = load_mask(self.paths[i], 32)
                return mask.float()
    """
    root = write(tmp_path, {"data_utils.py": MASK_HELPER, "dataset.py": caller})
    ((line, _, message),) = td012(root / "dataset.py")
    assert line == 8 and "`mask.float()` uses the result of `load_mask()` (data_utils.py line 6)" in message
    ((line, _, message),) = td012(root / "data_utils.py")
    assert line == 6 and "`mask.float()` in dataset.py (line 8)" in message


def test_a_package_that_star_exports_its_modules_and_a_script_in_a_sibling_folder(tmp_path):
    script = """
        import torch
        from seglib import load_mask

        masks = torch.stack([load_mask(p, 16) for p in ["a.pt", "b.pt"]])
        first = load_mask("c.pt", 16)
        print(first.shape)
    """
    root = write(
        tmp_path,
        {
            "seglib/__init__.py": "from .io import *\n",
            "seglib/io.py": MASK_HELPER,
            "scripts/inspect_masks.py": script,
        },
    )
    ((line, _, message),) = td012(root / "scripts" / "inspect_masks.py")
    assert line == 6 and "`first.shape` uses the result of `load_mask()` (../seglib/io.py line 6)" in message


@pytest.mark.parametrize(
    "body",
    [
        # early exits
        "mask = load_mask(path, 8)\n    if mask is None:\n        return 0\n    return mask.sum()",
        "mask = load_mask(path, 8)\n    if not mask:\n        raise FileNotFoundError(path)\n    return mask.sum()",
        # a fallback
        "mask = load_mask(path, 8) or torch.ones(8, 8)\n    return mask.sum()",
        # the result ignored (called to warm a cache)
        "load_mask(path, 8)\n    return 0",
        # a parameter of the same name is another function
        "load_mask = lambda p, n: torch.ones(n, n)\n    return load_mask(path, 8).sum()",
    ],
)
def test_callers_in_another_file_that_check_or_ignore_are_fine(tmp_path, body):
    caller = f"import torch\nfrom data_utils import load_mask\n\n\ndef area(path):\n    {body}\n"
    root = write(tmp_path, {"data_utils.py": MASK_HELPER, "measure.py": caller})
    assert td012(root / "measure.py") == []


def test_a_parameter_named_like_the_import_hides_it(tmp_path):
    caller = """
        import torch
        from data_utils import load_mask


        def area(path, load_mask=torch.load):
            return load_mask(path).sum()
    """
    root = write(tmp_path, {"data_utils.py": MASK_HELPER, "measure.py": caller})
    assert td012(root / "measure.py") == []
    assert [severity for _, severity, _ in td012(root / "data_utils.py")] == ["information"]


def test_a_helper_in_a_file_without_torch_is_not_this_rule(tmp_path):
    numpy_helper = MASK_HELPER.replace("import torch", "import numpy as np").replace("torch.load", "np.load")
    caller = "import torch\nfrom data_utils import load_mask\n\nm = load_mask('a', 2)\nprint(m.shape)\n"
    root = write(tmp_path, {"data_utils.py": numpy_helper, "measure.py": caller})
    assert td012(root / "measure.py") == []
