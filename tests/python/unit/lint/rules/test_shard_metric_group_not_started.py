"""TD020 and a factory that shards only inside a process group: ``loaders.py`` builds a
``DistributedSampler`` under ``if dist.is_initialized():`` and a plain loader otherwise. A
test script that never starts a group (no ``init_process_group``, no ``init_distributed_*``
helper) gets the whole test set in its one process, so its average is the true one; the
training script that starts the group does evaluate one shard, and is still reported."""

from __future__ import annotations

from pathlib import Path
from typing import List

from support.lint import lint_files

LOADERS = """
    import torch.distributed as dist
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler


    def make_test_loader(dataset, batch_size):
        if dist.is_available() and dist.is_initialized():
            sampler = DistributedSampler(dataset, shuffle=False)
        else:
            sampler = None
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler)
"""

SCRIPT = """
    import torch
    import torch.distributed as dist

    from loaders import make_test_loader


    def measure(model, dataset):
        test_loader = make_test_loader(dataset, 64)
        model.eval()
        right, count = 0, 0
        with torch.no_grad():
            for x, y in test_loader:
                right += (model(x).argmax(1) == y).sum().item()
                count += len(y)
        print(f"accuracy {{right / count:.4f}}")


    def main(model, dataset):
        {start}measure(model, dataset)
"""


def td020_lines(root: Path, start: str) -> List[int]:
    found = lint_files(root, {"loaders.py": LOADERS, "measure.py": SCRIPT.format(start=start)}, ["measure.py"])
    return [f.line for f in found["measure.py"].all if f.rule_id == "TD020"]


def test_a_script_that_starts_no_process_group_evaluates_the_whole_set(tmp_path: Path):
    assert td020_lines(tmp_path, "") == []


def test_a_script_that_starts_the_group_evaluates_one_shard(tmp_path: Path):
    assert td020_lines(tmp_path, 'dist.init_process_group("nccl")\n    ') == [15]


def test_a_helper_named_for_starting_it_counts_as_starting_it(tmp_path: Path):
    assert td020_lines(tmp_path, "init_distributed_mode()\n    ") == [15]


def test_a_setup_helper_or_a_launcher_may_start_it(tmp_path: Path):
    # the DDP tutorial's ``setup(rank, world_size)`` from another file: when unsure, it may
    assert td020_lines(tmp_path, "setup(0, 2)\n    ") == [15]
    assert td020_lines(tmp_path, "mp.spawn(main, nprocs=2)\n    ") == [15]
