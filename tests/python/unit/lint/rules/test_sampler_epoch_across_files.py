"""TD018 for a loader built by a factory in another file: ``data.py`` wraps a shuffling
``DistributedSampler`` (directly as ``sampler=``, or in a ``BatchSampler`` given as
``batch_sampler=``) and returns the loaders; ``train.py`` unpacks them and trains for several
epochs. When neither file calls ``set_epoch``, every epoch sees the same order: reported once,
in ``train.py``. A ``set_epoch`` call in either file keeps it quiet."""

from __future__ import annotations

from pathlib import Path
from typing import List

from support.lint import lint_files

DATA = """
    import torch
    from torch.utils.data import BatchSampler, DataLoader
    from torch.utils.data.distributed import DistributedSampler


    def loaders(train_set, valid_set, size):
        spread = DistributedSampler(train_set)
        {build}
        valid = DataLoader(valid_set, batch_size=size)
        return train, valid
"""

DIRECT = "train = DataLoader(train_set, batch_size=size, sampler=spread)"
BATCHED = "groups = BatchSampler(spread, batch_size=size, drop_last=True)\n        train = DataLoader(train_set, batch_sampler=groups)"

TRAIN = """
    import torch

    from data import loaders


    def one_pass(model, optimizer, batches):
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


    def main(model, train_set, valid_set, epochs):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train_loader, valid_loader = loaders(train_set, valid_set, 32)
        for epoch in range(epochs):
            {reset}one_pass(model, optimizer, train_loader)
"""


def td018(root: Path, build: str, reset: str = "") -> List[int]:
    found = lint_files(root, {"data.py": DATA.format(build=build), "train.py": TRAIN.format(reset=reset)}, ["train.py"])
    return [f.line for f in found["train.py"].all if f.rule_id == "TD018"]


def test_a_factory_loader_with_a_sampler_and_no_set_epoch_is_reported(tmp_path: Path):
    assert td018(tmp_path, DIRECT) == [17]


def test_a_sampler_wrapped_in_a_batch_sampler_is_followed(tmp_path: Path):
    assert td018(tmp_path, BATCHED) == [17]


def test_set_epoch_in_the_training_script_keeps_it_quiet(tmp_path: Path):
    assert td018(tmp_path, DIRECT, "train_loader.sampler.set_epoch(epoch)\n        ") == []


def test_set_epoch_in_the_factory_file_keeps_it_quiet(tmp_path: Path):
    helper = DIRECT + "\n        train.sampler.set_epoch(0)"
    assert td018(tmp_path, helper) == []
