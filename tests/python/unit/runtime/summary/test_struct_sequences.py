"""``torch.max(x, dim=1)``, ``torch.sort``, ``topk``, ``linalg.svd`` return C struct sequences
(tuple subclasses without ``_fields``): they get a container's line, NaN check included, instead
of a repr that prints the tensors' values. Struct sequences holding no tensor (``os.stat``) keep
the debugger's own presentation."""

import math
import os
import time

import pytest
import torch

from torchdoctor.runtime.summary.api import stats, summarize, summarize_if_ours

pytestmark = pytest.mark.filterwarnings("error")


def test_max_over_a_dim_is_a_container_of_its_two_tensors():
    x = torch.arange(12.0).reshape(3, 4)
    x[0, 0] = math.nan
    info = stats(torch.max(x, dim=0))
    assert info["kind"] == "container" and info["tensors"] == 2
    assert info["nan_in"] == ["[0]"]
    line = summarize(torch.max(x, dim=0))
    assert line.startswith("max[2 tensors]") and "⚠ NaN" in line and "tensor(" not in line


@pytest.mark.parametrize(
    "make",
    [lambda x: torch.sort(x), lambda x: torch.topk(x, 2), lambda x: torch.linalg.svd(x)],
    ids=["sort", "topk", "svd"],
)
def test_other_struct_sequences_are_containers(make):
    result = make(torch.randn(3, 3, generator=torch.Generator().manual_seed(0)))
    assert stats(result)["kind"] == "container"
    assert "tensor(" not in summarize(result)


def test_struct_sequences_without_tensors_are_left_to_the_debugger():
    assert summarize_if_ours(os.stat(".")) is None
    assert summarize_if_ours(time.gmtime(0)) is None
