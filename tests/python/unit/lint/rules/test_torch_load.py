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


# A tutorial on saving: the whole network pickled to one file, its state dict to another.
SAVE_RELOAD = """
import torch
import torch.nn as nn

net1 = nn.Sequential(nn.Linear(1, 10), nn.ReLU(), nn.Linear(10, 1))
torch.save(net1, "net.pkl")
torch.save(net1.state_dict(), "net_params.pkl")


def restore_net():
    net2 = torch.load("net.pkl")
    return net2


def restore_later():
    return torch.load("net.pkl")


def restore_params():
    net3 = nn.Sequential(nn.Linear(1, 10), nn.ReLU(), nn.Linear(10, 1))
    net3.load_state_dict(torch.load("net_params.pkl"))
    return net3
"""


def test_a_whole_pickled_model_gets_no_quick_fix_that_would_refuse_it():
    found = {f.line: f for f in findings(SAVE_RELOAD, "TD015")}
    assert sorted(found) == [10, 15, 20]
    assert found[10].fix is None and "loads a whole model into `net2`" in found[10].message
    assert found[15].fix is None and '`"net.pkl"` holds a whole model' in found[15].message
    assert found[20].fix is not None and "whole model" not in found[20].message  # a state dict: fixable
    assert all(f.severity == "information" for f in found.values())


def test_a_load_used_as_a_model_gets_no_quick_fix():
    text = T + "def restore(p):\n    return torch.load(p).eval()\n"
    (finding,) = findings(text, "TD015")
    assert finding.fix is None and "`.eval()`" in finding.message
