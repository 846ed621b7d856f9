"""Containers and records of tensors: aliases counted once, records (dataclass, ModelOutput) get a
line, and a NaN inside is flagged by the field that holds it."""

import dataclasses
import math
from collections import OrderedDict
from typing import Optional

import numpy as np
import pytest
import torch

from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")


def test_the_same_tensor_ten_times_is_one_tensor_and_its_memory_once():
    t = torch.zeros(100, 100)
    info = stats([t] * 10)
    assert info["tensors"] == 10 and info["distinct"] == 1 and info["nbytes"] == t.numel() * 4
    assert summarize([t] * 10).startswith("list[10 tensors (1 distinct)] each [100, 100] f32 cpu 39.1 KiB")


def test_views_of_one_buffer_cost_the_buffer_once():
    t = torch.zeros(1000)
    info = stats({"all": t, "head": t[:10], "other": torch.zeros(10)})
    assert info["tensors"] == 3 and "distinct" not in info  # three objects, two buffers
    assert info["nbytes"] == 4000 + 40
    a = np.zeros(1000)
    assert stats([a, a[:5]])["nbytes"] == 8000


def test_expanded_tensors_count_their_stored_bytes():
    t = torch.arange(4.0).expand(10**6, 4)
    info = stats([t])
    assert info["nbytes"] == 16


@dataclasses.dataclass
class Batch:
    inputs: torch.Tensor
    labels: torch.Tensor
    note: str = "train"


class ModelOutput(OrderedDict):
    """The shape of transformers' ModelOutput: an OrderedDict whose subclasses are dataclasses."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value


@dataclasses.dataclass
class CausalLMOutput(ModelOutput):
    loss: Optional[torch.Tensor] = None
    logits: Optional[torch.Tensor] = None


def test_dataclass_of_tensors_gets_a_line_and_flags_its_nan():
    batch = Batch(torch.tensor([1.0, math.nan]), torch.tensor([0, 1]))
    line = summarize(batch)
    assert line.startswith("Batch[3 items, 2 tensors]") and "⚠ NaN in inputs" in line


def test_model_output_gets_a_line_and_flags_its_nan():
    out = CausalLMOutput(loss=torch.tensor(math.nan), logits=torch.randn(2, 5))
    line = summarize(out)
    assert line.startswith("CausalLMOutput[2 tensors]") and "⚠ NaN in 'loss'" in line
    assert stats(out)["nan_in"] == ["'loss'"]


def test_records_without_tensors_keep_their_own_presentation():
    @dataclasses.dataclass
    class Config:
        lr: float = 0.1

    assert stats(Config())["kind"] == "other"
