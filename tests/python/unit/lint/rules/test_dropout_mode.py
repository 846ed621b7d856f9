"""TD016: functional dropout ignores eval() (moved from test_lint_misc_rules.py)."""

import pytest

from support.lint import code, fixed, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD016 --------------------------------------------------------------------------------

MLP = T + code("""
    class MLP(nn.Module):
        def forward(self, x):
            return {body}
""")


def test_functional_dropout_without_training_flag():
    text = MLP.format(body="F.dropout(x, 0.3)")
    assert hits(text) == [("TD016", 6)]
    assert fixed(text, "TD016").splitlines()[5].strip() == "return F.dropout(x, 0.3, training=self.training)"


def test_dropout_module_built_inside_forward():
    assert hits(MLP.format(body="nn.Dropout(0.3)(x)")) == [("TD016", 6)]


@pytest.mark.parametrize(
    "body",
    [
        "F.dropout(x, 0.3, training=self.training)",
        "F.dropout(x, 0.3, True)",
        "F.dropout(x, 0.3, training=True)",
        "self.drop(x)",
        "F.relu(x)",
    ],
)
def test_explicit_training_flag_or_layer_is_fine(body):
    assert hits(MLP.format(body=body)) == []


def test_functional_dropout_outside_a_module_is_fine():
    assert hits(T + "def aug(x):\n    return F.dropout(x, 0.1)\n") == []
