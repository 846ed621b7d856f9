"""TD005: BCE with multi-class integer labels."""

import pytest

from support.lint import hits

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def test_one_hot_of_class_indices_into_bce_with_logits():
    text = (
        HEADER + "labels = torch.randint(0, 3, (8,))\n"
        "loss = F.binary_cross_entropy_with_logits(z, F.one_hot(labels, num_classes=3).float())\n"
    )
    assert hits(text) == [("TD005", 5)]


@pytest.mark.parametrize(
    "make",
    [
        "torch.randint(0, 5, (8,))",
        "torch.randint(5, (8,))",
        "torch.randint(low=1, high=9, size=(8,))",
        "torch.tensor([0, 2, 1, 3])",
    ],
)
def test_integer_class_labels_into_bce(make):
    text = HEADER + f"y = {make}\ncrit = nn.BCELoss()\nloss = crit(p, y.float().unsqueeze(1))\n"
    assert hits(text) == [("TD005", 6)]


@pytest.mark.parametrize(
    "make",
    [
        "torch.randint(0, 2, (8,))",
        "torch.tensor([0, 1, 1, 0])",
        "(x > 0).float()",
        "F.one_hot(y0, num_classes=2)",
        "batch_labels",
    ],
)
def test_binary_or_unknown_labels_are_fine(make):
    text = HEADER + f"y = {make}\nloss = F.binary_cross_entropy(p, y.float())\n"
    assert hits(text) == []


def test_multiclass_labels_with_cross_entropy_are_fine():
    text = HEADER + "y = torch.randint(0, 5, (8,))\nloss = F.cross_entropy(z, y)\n"
    assert hits(text) == []
