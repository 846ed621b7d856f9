"""TD017's optional-sampler report counts a ``sampler = None`` only where it can reach the
loader: ``picker = None`` followed by an ``if``/``else`` (or a ``try`` and its handler) that
sets ``picker`` on both ways leaves no path where the loader gets ``None``. A ``None`` that
does reach it (``... if distributed else None``, or an ``if`` without ``else``) is reported."""

from __future__ import annotations

import pytest

from support.lint import hits

SCRIPT = """
import torch
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler


def make_train_loader(opts, images):
    picker = None
{choose}
    train_loader = DataLoader(images, batch_size=16, sampler=picker)
    return train_loader
"""

OVERWRITTEN = {
    "if/else": (
        "    if opts.ddp:\n        picker = DistributedSampler(images)\n"
        "    else:\n        picker = RandomSampler(images)"
    ),
    "try/except": (
        "    try:\n        picker = DistributedSampler(images)\n"
        "    except RuntimeError:\n        picker = RandomSampler(images)"
    ),
    "else raises": (
        "    if opts.ddp:\n        picker = DistributedSampler(images)\n    else:\n        raise SystemExit('ddp only')"
    ),
}


def td017(text: str):
    return [line for rule, line in hits(text) if rule == "TD017"]


@pytest.mark.parametrize("choose", sorted(OVERWRITTEN))
def test_a_none_start_value_set_again_on_every_path_is_quiet(choose):
    assert td017(SCRIPT.format(choose=OVERWRITTEN[choose])) == []


def test_a_none_that_reaches_the_loader_through_a_missing_else_is_reported():
    choose = "    if opts.ddp:\n        picker = DistributedSampler(images)"
    assert td017(SCRIPT.format(choose=choose)) == [10]


def test_an_inline_none_is_reported():
    choose = "    picker = DistributedSampler(images) if opts.ddp else None"
    assert td017(SCRIPT.format(choose=choose)) == [9]
