"""TD015: torch.load without weights_only=True (moved from test_lint_misc_rules.py)."""

import pytest

from support.lint import findings, fixed, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD015 --------------------------------------------------------------------------------


def test_weights_only_false_is_a_warning_with_fix():
    text = T + "state = torch.load(path, weights_only=False)\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.severity) == ("TD015", "warning")
    assert fixed(text, "TD015").splitlines()[3] == "state = torch.load(path, weights_only=True)"


def test_missing_weights_only_is_information_with_fix():
    text = T + "state = torch.load(\n    path,\n    map_location='cpu',\n)\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.severity) == ("TD015", "information")
    assert "map_location='cpu', weights_only=True" in fixed(text, "TD015")


@pytest.mark.parametrize(
    "call",
    [
        "torch.load(p, weights_only=True)",
        "torch.load(p, **kw)",
        "torch.load(p, weights_only=flag)",
        "pickle.load(p)",
        "np.load(p)",
    ],
)
def test_safe_or_undecidable_loads_are_fine(call):
    assert hits(T + "import pickle\nimport numpy as np\n" + call + "\n") == []


@pytest.mark.parametrize(
    "imports, call",
    [
        ("import torch as T", "T.load(p)"),
        ("from torch import load", "load(p)"),
        ("from torch import load as restore", "restore(p)"),
        ("from torch import load as restore", "model = build(restore(p))"),
    ],
)
def test_torch_load_is_found_under_any_import_spelling(imports, call):
    # The rule reads the calls named ``load`` and the names imported as it, not every call.
    assert hits(f"{imports}\nimport torch\n{call}\n", "TD015") == [("TD015", 3)]


def test_a_load_that_is_not_torch_load_is_not_taken_for_it():
    text = "import torch\nfrom pickle import load as restore\nrestore(p)\nstate.load(p)\nload(p)\n"
    assert hits(text, "TD015") == []
