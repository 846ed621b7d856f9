"""TD017: training DataLoader without shuffle (basics) (moved from test_lint_misc_rules.py)."""

import pytest

from support.lint import fixed, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD017 --------------------------------------------------------------------------------

DL = "from torch.utils.data import DataLoader\n"


def test_training_loader_without_shuffle():
    text = DL + "train_loader = DataLoader(dataset, batch_size=32)\n"
    assert hits(text) == [("TD017", 2)]
    assert fixed(text, "TD017").splitlines()[1] == "train_loader = DataLoader(dataset, batch_size=32, shuffle=True)"


def test_training_dataset_name_is_enough():
    assert hits(DL + "loader = DataLoader(train_ds, 64)\n") == [("TD017", 2)]


@pytest.mark.parametrize(
    "line",
    [
        "train_loader = DataLoader(ds, batch_size=32, shuffle=True)",
        "train_loader = DataLoader(ds, batch_size=32, shuffle=False)",
        "train_loader = DataLoader(ds, batch_size=32, sampler=sampler)",
        "train_loader = DataLoader(ds, 32, True)",
        "val_loader = DataLoader(train_ds, batch_size=32)",
        "test_loader = DataLoader(test_ds)",
        "train_loader = DataLoader(train_stream, batch_size=4)",
        "train_loader = DataLoader(ds, **loader_kwargs)",
    ],
)
def test_shuffled_explicit_or_not_training_loaders_are_fine(line):
    assert hits(DL + line + "\n") == []
