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
