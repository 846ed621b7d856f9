"""TD019: a DataLoader given a sampler and shuffle=True (DataLoader raises ValueError)."""

import pytest

from support.lint import findings, fixed, hits

HEAD = """
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler

data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
"""


def test_a_named_distributed_sampler_is_an_error_fixed_with_shuffle_false() -> None:
    text = HEAD + "sampler = DistributedSampler(data)\nloader = DataLoader(data, shuffle=True, sampler=sampler)\n"
    (finding,) = findings(text, "TD019")
    assert finding.severity == "error" and finding.line == 7
    assert "sampler option is mutually exclusive with shuffle" in finding.message
    assert "DataLoader(data, shuffle=False, sampler=sampler)" in fixed(text, "TD019")


def test_a_sampler_that_exists_only_when_distributed_is_a_warning_fixed_by_testing_it() -> None:
    text = HEAD + "if distributed:\n    s = DistributedSampler(data)\nelse:\n    s = None\n"
    text += "loader = DataLoader(data, batch_size=4, shuffle=True, sampler=s)\n"
    (finding,) = findings(text, "TD019")
    assert finding.severity == "warning" and "when it is the `DistributedSampler` (line 7)" in finding.message
    assert "shuffle=(s is None), sampler=s)" in fixed(text, "TD019")


@pytest.mark.parametrize(
    "loader",
    [
        "DataLoader(data, shuffle=True, sampler=RandomSampler(data))",
        "DataLoader(data, shuffle=True, sampler=DistributedSampler(data) if ddp else None)",
        "DataLoader(data, sampler=DistributedSampler(data), shuffle=True, batch_size=8)",
    ],
)
def test_inline_samplers_are_flagged(loader) -> None:
    assert [rule for rule, _ in hits(HEAD + f"loader = {loader}\n", "TD019")] == ["TD019"]


@pytest.mark.parametrize(
    "sampler",
    ["DistributedSampler(data, shuffle=False)", "SequentialSampler(data)", "DistributedSampler(data, 2, 0, False)"],
)
def test_no_fix_when_the_sampler_does_not_shuffle_the_choice_is_the_users(sampler) -> None:
    (finding,) = findings(HEAD + f"loader = DataLoader(data, shuffle=True, sampler={sampler})\n", "TD019")
    assert finding.fix is None


@pytest.mark.parametrize(
    "setup",
    [
        # the pattern of pytorch/examples imagenet: shuffle only without a sampler
        "s = DistributedSampler(data) if ddp else None\nloader = DataLoader(data, shuffle=(s is None), sampler=s)\n",
        "loader = DataLoader(data, shuffle=False, sampler=DistributedSampler(data))\n",
        "loader = DataLoader(data, sampler=DistributedSampler(data))\n",
        # shuffle decided elsewhere, sampler of unknown origin, a sampler that is always None
        "loader = DataLoader(data, shuffle=args.shuffle, sampler=DistributedSampler(data))\n",
        "loader = DataLoader(data, shuffle=True, sampler=make_sampler(data))\n",
        "s = None\nloader = DataLoader(data, shuffle=True, sampler=s)\n",
        "def build(s):\n    return DataLoader(data, shuffle=True, sampler=s)\n",
        "loader = DataLoader(data, shuffle=True)\n",
    ],
)
def test_working_loaders_are_quiet(setup) -> None:
    assert hits(HEAD + setup, "TD019") == []


def test_options_merged_through_star_kwargs_are_read_as_mnist_writes_them() -> None:
    text = HEAD + "def main(use_accel):\n    train_kwargs = {'batch_size': 8, 'sampler': DistributedSampler(data)}\n"
    text += "    test_kwargs = {'batch_size': 8}\n    if use_accel:\n"
    text += "        accel_kwargs = {'num_workers': 1, 'shuffle': True}\n"
    text += "        train_kwargs.update(accel_kwargs)\n        test_kwargs.update(accel_kwargs)\n"
    text += "    train = DataLoader(data, **train_kwargs)\n    test = DataLoader(data, **test_kwargs)\n"
    (finding,) = findings(text, "TD019")  # the test loader has no sampler: it works
    assert finding.line == 13 and finding.severity == "warning" and finding.fix is None
    assert "`shuffle=True` (line 10)" in finding.message and "on some paths" in finding.message


def test_an_unconditional_star_dict_is_an_error() -> None:
    text = HEAD + "kw = {'sampler': DistributedSampler(data)}\nkw['shuffle'] = True\nloader = DataLoader(data, **kw)\n"
    (finding,) = findings(text, "TD019")
    assert finding.severity == "error" and finding.line == 8


@pytest.mark.parametrize(
    "setup",
    [
        "kw = {'sampler': DistributedSampler(data), 'shuffle': False}\nloader = DataLoader(data, **kw)\n",
        "kw = {'sampler': DistributedSampler(data)}\nkw.update(more)\nkw['shuffle'] = True\n"
        "loader = DataLoader(data, **kw)\n",  # ``more`` cannot be read: it might hold anything
        "kw = {'sampler': DistributedSampler(data), 'shuffle': True}\ntweak(kw)\nloader = DataLoader(data, **kw)\n",
        "kw = {'sampler': DistributedSampler(data), 'shuffle': True}\nkw.pop('shuffle')\n"
        "loader = DataLoader(data, **kw)\n",
        "def build(**kw):\n    return DataLoader(data, **kw)\n",
    ],
    ids=["shuffle-false", "unreadable-update", "handed-to-a-function", "popped", "parameter"],
)
def test_star_dicts_that_work_or_cannot_be_read_are_quiet(setup) -> None:
    assert hits(HEAD + setup, "TD019") == []


def test_a_projects_own_sampler_class_counts_without_a_fix() -> None:
    # deit's RASampler, timm's OrderedDistributedSampler: any sampler that is not None raises
    text = HEAD + "from samplers import RASampler\n"
    text += "if repeated_aug:\n    s = RASampler(data)\nelse:\n    s = DistributedSampler(data)\n"
    text += "loader = DataLoader(data, shuffle=True, sampler=s)\n"
    (finding,) = findings(text, "TD019")
    assert finding.severity == "error" and finding.fix is None  # whether RASampler shuffles: not known
