"""TD012 on a converter that dispatches on the type of its argument (``if isinstance(x,
np.ndarray): return ...`` / ``if isinstance(x, torch.Tensor): return ...``, no fallback): any
other type gives None, which deserves a ``TypeError`` at the ``def`` (information there), but a
caller in another file that passes a tensor gets a value: its use of the result is not
reported. A helper that falls off for another reason is still reported at the caller."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

from support.lint import lint_files

CONVERT = """
    import numpy as np
    import torch


    def as_array(value):
        \"\"\"A tensor or an array, as an array.\"\"\"
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, torch.Tensor):
            return value.detach().cpu().numpy()
"""

# The same helper, one branch tested on a property of the value rather than its type.
NOT_A_DISPATCH = CONVERT.replace("if isinstance(value, torch.Tensor):", "if value.ndim > 0:")

SCORE = """
    import torch
    from convert import as_array


    def best_box(scores):
        picked = as_array(scores.softmax(-1))
        return picked.argmax(-1)
"""


def lint_all(root: Path, files: Dict[str, str]) -> Dict[str, List[Tuple[int, str]]]:
    found = lint_files(root, files)
    return {name: [(f.line, f.severity) for f in result.all if f.rule_id == "TD012"] for name, result in found.items()}


def test_a_type_dispatch_is_information_at_its_def_and_quiet_at_its_callers(tmp_path: Path):
    found = lint_all(tmp_path, {"convert.py": CONVERT, "score.py": SCORE})
    assert found == {"convert.py": [(5, "information")], "score.py": []}


def test_a_helper_that_is_no_type_dispatch_is_still_reported_at_the_caller(tmp_path: Path):
    found = lint_all(tmp_path, {"convert.py": NOT_A_DISPATCH, "score.py": SCORE})
    assert found["score.py"] == [(7, "warning")]
    assert [severity for _, severity in found["convert.py"]] == ["warning"]
