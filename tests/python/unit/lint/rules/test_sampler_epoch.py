"""TD018: a shuffling DistributedSampler whose set_epoch is never called."""

import pytest

from support.lint import findings, fixed, hits

HEAD = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
"""

LOOP = """
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
"""


def test_a_named_sampler_in_an_epoch_loop_is_flagged_and_fixed() -> None:
    text = (
        HEAD + "sampler = DistributedSampler(data)\nloader = DataLoader(data, batch_size=8, sampler=sampler)\n" + LOOP
    )
    assert hits(text, "TD018") == [("TD018", 9)]  # the DistributedSampler(...) line
    assert "for epoch in range(3):\n    sampler.set_epoch(epoch)\n    for x, y in loader:" in fixed(text, "TD018")


def test_an_inline_sampler_is_fixed_through_the_loader() -> None:
    text = HEAD + "loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, shuffle=True))\n" + LOOP
    assert [rule for rule, _ in hits(text, "TD018")] == ["TD018"]
    assert "    loader.sampler.set_epoch(epoch)\n" in fixed(text, "TD018")


@pytest.mark.parametrize(
    "variant",
    [
        # set_epoch is called (however it is reached)
        (
            "sampler = DistributedSampler(data)\nloader = DataLoader(data, sampler=sampler)\n",
            "    loader.sampler.set_epoch(epoch)\n",
        ),
        # no shuffle: the order is meant to be fixed
        ("sampler = DistributedSampler(data, shuffle=False)\nloader = DataLoader(data, sampler=sampler)\n", ""),
        # shuffle decided elsewhere: unknown, quiet
        ("sampler = DistributedSampler(data, shuffle=args.shuffle)\nloader = DataLoader(data, sampler=sampler)\n", ""),
    ],
)
def test_set_epoch_or_no_shuffle_is_quiet(variant) -> None:
    setup, first_line = variant
    loop = LOOP.replace("for epoch in range(3):\n", "for epoch in range(3):\n" + first_line)
    assert hits(HEAD + setup + loop, "TD018") == []


def test_one_pass_over_the_loader_has_no_epochs_to_repeat() -> None:
    text = HEAD + "sampler = DistributedSampler(data)\nloader = DataLoader(data, sampler=sampler)\n"
    text += (
        "for x, y in loader:\n    opt.zero_grad()\n    nn.functional.mse_loss(model(x), y).backward()\n    opt.step()\n"
    )
    assert hits(text, "TD018") == []


def test_a_loader_handed_to_a_function_of_this_file_is_followed() -> None:
    text = HEAD + "sampler = DistributedSampler(data)\nloader = DataLoader(data, sampler=sampler)\n"
    text += "def train(dl):\n    for x, y in dl:\n        pass\n\nfor epoch in range(3):\n    train(loader)\n"
    (finding,) = findings(text, "TD018")
    assert finding.severity == "warning" and "epoch loop (line 15)" in finding.message


def test_a_loader_reached_some_other_way_is_only_information_and_says_so() -> None:
    text = HEAD + "from engine import train_one_epoch\n"
    text += "def make_loader():\n    return DataLoader(data, sampler=DistributedSampler(data))\n\n"
    text += "for epoch in range(3):\n    train_one_epoch(model, make_loader())\n"
    (finding,) = findings(text, "TD018")
    assert finding.severity == "information" and "unless code in another file calls it" in finding.message


@pytest.mark.parametrize(
    "setup",
    [
        "sampler = DistributedSampler(data)\nloader = DataLoader(data, sampler=sampler)\nrun(loader, sampler=sampler)\n",
        "val_sampler = DistributedSampler(val_data)\nloader = DataLoader(val_data, sampler=val_sampler)\n",
    ],
    ids=["sampler-handed-to-a-function", "validation-sampler"],
)
def test_a_sampler_handed_on_or_for_validation_is_quiet(setup) -> None:
    text = HEAD + "val_data = data\n" + setup + LOOP
    assert hits(text, "TD018") == []
