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


GUARDED = T + code("""
    class Net(nn.Module):
        def forward(self, x):
            {guard}
                x = {drop}
            return x
""")


@pytest.mark.parametrize(
    "guard",
    [
        "if self.training:",
        "if self.training and self.p > 0:",  # kuangliu/pytorch-cifar's EfficientNet head
        "if self.p > 0 and self.training:",
        "if not (not self.training or self.p == 0):",
    ],
)
@pytest.mark.parametrize("drop", ["F.dropout(x, p=0.2)", "nn.Dropout(0.2)(x)"])
def test_dropout_that_runs_only_while_training_is_fine(guard, drop):
    assert hits(GUARDED.format(guard=guard, drop=drop)) == []


@pytest.mark.parametrize("guard", ["if self.p > 0:", "if self.training or self.p > 0:", "if not self.training:"])
def test_dropout_under_a_test_that_does_not_need_training_is_reported(guard):
    assert hits(GUARDED.format(guard=guard, drop="F.dropout(x, p=0.2)")) == [("TD016", 7)]


def test_dropout_in_the_else_of_not_training_and_in_a_conditional_expression():
    other = T + code("""
        class Net(nn.Module):
            def forward(self, x):
                if not self.training:
                    return x
                else:
                    x = F.dropout(x, 0.2)
                return F.dropout(x, 0.1) if self.training else x
    """)
    assert hits(other) == []
    wrong = T + code("""
        class Net(nn.Module):
            def forward(self, x):
                return x if self.training else F.dropout(x, 0.1)
    """)
    assert hits(wrong) == [("TD016", 6)]
