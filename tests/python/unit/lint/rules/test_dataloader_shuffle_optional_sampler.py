"""TD017 and a sampler that only distributed runs have (lint/rules/loader_samplers.py): a video
classifier's ``train_sampler`` is a ``DistributedSampler`` when ``cfg.distributed`` and ``None``
otherwise, and the loader takes ``sampler=train_sampler``. With ``shuffle=(train_sampler is
None)`` beside it every run shuffles; without it a single-process run reads the clips in stored
order. A sampler that is always set, or a validation loader, stays quiet."""

from __future__ import annotations

from support.lint import fixed, hits

SCRIPT = """
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def make_train_loader(cfg, clips):
    {choose}
    train_loader = DataLoader(clips, batch_size=cfg.batch_size,{shuffle} num_workers=4,
                              sampler=train_sampler, pin_memory=True)
    return train_loader
"""

IF_ELSE = (
    "if cfg.distributed:\n        train_sampler = DistributedSampler(clips)\n    else:\n        train_sampler = None"
)
INLINE = "train_sampler = DistributedSampler(clips) if cfg.distributed else None"
ALWAYS = "train_sampler = DistributedSampler(clips)"


def found(choose: str, shuffle: str = ""):
    text = SCRIPT.format(choose=choose, shuffle=shuffle)
    return [rule for rule, _ in hits(text) if rule == "TD017"]


def test_the_idiom_with_shuffle_when_there_is_no_sampler_is_quiet():
    assert found(IF_ELSE, " shuffle=(train_sampler is None),") == []


def test_a_sampler_that_is_none_outside_distributed_runs_without_shuffle_is_reported():
    assert found(IF_ELSE) == ["TD017"]
    assert found(INLINE) == ["TD017"]


def test_the_fix_shuffles_exactly_when_there_is_no_sampler():
    assert "pin_memory=True, shuffle=(train_sampler is None))" in fixed(
        SCRIPT.format(choose=INLINE, shuffle=""), "TD017"
    )


def test_a_sampler_that_is_always_set_is_quiet():
    assert found(ALWAYS) == []


def test_a_validation_loader_is_quiet():
    text = SCRIPT.format(choose=IF_ELSE, shuffle="").replace("train_loader", "val_loader")
    assert [rule for rule, _ in hits(text) if rule == "TD017"] == []
