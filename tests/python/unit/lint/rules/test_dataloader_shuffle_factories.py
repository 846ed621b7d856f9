"""TD017 through a loader factory of the script: ``def make_loader(rows, size,
shuffle=False)`` returns ``DataLoader(rows, size, shuffle=shuffle)``; the training loader made
without ``shuffle=True`` takes the default ``False`` and is reported at that call, with a fix
that passes ``shuffle=True``. The evaluation loaders that keep the default, a training call that
passes ``True`` (by keyword or position) and a factory that shuffles by default are quiet."""

from __future__ import annotations

from support.lint import fixed, hits

SCRIPT = """
import torch
from torch.utils.data import DataLoader


def make_loader(rows, size, shuffle={default}):
    return DataLoader(rows, batch_size=size, shuffle=shuffle)


def fit(model, train_rows, dev_rows, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = {train_call}
    dev_loader = make_loader(dev_rows, 256)
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    return dev_loader
"""


def td017(train_call: str, default: str = "False"):
    return hits(SCRIPT.format(train_call=train_call, default=default), "TD017")


def test_the_training_loader_left_at_the_factory_default_is_reported():
    assert td017("make_loader(train_rows, 64)") == [("TD017", 11)]
    assert td017("make_loader(train_rows, 64, shuffle=False)") == [("TD017", 11)]


def test_the_fix_passes_shuffle_true():
    text = SCRIPT.format(train_call="make_loader(train_rows, 64)", default="False")
    assert "train_loader = make_loader(train_rows, 64, shuffle=True)" in fixed(text, "TD017")


def test_a_training_call_that_asks_for_shuffling_is_quiet():
    assert td017("make_loader(train_rows, 64, shuffle=True)") == []
    assert td017("make_loader(train_rows, 64, True)") == []


def test_a_factory_that_shuffles_by_default_is_quiet():
    assert td017("make_loader(train_rows, 64)", default="True") == []
