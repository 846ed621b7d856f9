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


def test_a_walk_cut_short_gives_lower_bounds_and_no_shape_for_each():
    from torchdoctor.runtime.summary import container_info

    many = [torch.zeros(2) for _ in range(container_info.MAX_LEAVES + 44)]
    line = summarize(many)
    # 300 tensors, 256 looked at: not "300 items, 256 tensors", as if 44 items were something else
    assert line.startswith(f"list[300 items, {container_info.MAX_LEAVES}+ tensors] f32 cpu ≥2 KiB"), line
    assert "each" not in line and line.endswith("(partly checked)")


def test_containers_too_deep_to_walk_are_not_claimed_checked():
    deep = {"logits": torch.zeros(2), "extra": [[[[torch.tensor([math.nan])]]]]}  # the NaN is below the depth bound
    info = stats(deep)
    assert info["complete"] is False and summarize(deep).endswith("(partly checked)")
    assert stats({"logits": torch.zeros(2), "extra": [[[[]]]]})["complete"] is True  # empty: nothing unseen
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.ones(3))])
    optimizer.param_groups[0]["params"][0].grad = torch.ones(3)
    optimizer.step()
    # its param_groups' ids and betas lie below the bound: plain values, no tensor left unseen
    assert stats(optimizer.state_dict())["complete"] is True


def test_tensor_keys_are_labelled_by_shape_without_their_repr():
    class Loud(torch.Tensor):
        reprs = 0

        def __repr__(self, *args, **kwargs):
            Loud.reprs += 1
            return super().__repr__(*args, **kwargs)

    weight = torch.nn.Parameter(torch.zeros(64, 32))
    state = {weight: {"exp_avg": torch.tensor([math.nan])}, torch.zeros(3).as_subclass(Loud): torch.ones(1)}
    assert stats(state)["nan_in"] == ["<Parameter[64, 32]>"]  # an optimizer's state, keyed by its parameters
    assert Loud.reprs == 0


def test_a_user_dict_of_tensors_gets_a_line():
    from collections import UserDict

    transformers = pytest.importorskip("transformers")
    encoded = transformers.BatchEncoding(
        {"input_ids": torch.zeros(2, 10, dtype=torch.long), "attention_mask": torch.ones(2, 10)}
    )
    assert summarize(encoded).startswith("BatchEncoding[2 tensors] each [2, 10] f32/i64 cpu 240 B")
    assert stats(UserDict({"ids": [1, 2]}))["kind"] == "other"  # no tensor: its own presentation


def kv_cache(layers: int, nan_in_layer: Optional[int] = None):
    transformers = pytest.importorskip("transformers")
    cache = transformers.DynamicCache()
    for i in range(layers):
        keys = torch.zeros(2, 4, 10, 8)
        if i == nan_in_layer:
            keys[0, 0, 0, 0] = math.nan
        cache.update(keys, torch.ones(2, 4, 10, 8), i)
    return cache


def test_a_kv_cache_gets_a_line_by_layer():
    cache = kv_cache(3, nan_in_layer=1)
    line = summarize(cache)
    assert line == "DynamicCache[3 items, 6 tensors] each [2, 4, 10, 8] f32 cpu 15 KiB ⚠ NaN in [1]", line
    assert stats(kv_cache(0))["kind"] == "other"  # an empty cache keeps its own presentation


def test_a_model_output_counts_the_tensors_of_its_cache():
    transformers = pytest.importorskip("transformers")
    both = transformers.EncoderDecoderCache(kv_cache(2), kv_cache(2, nan_in_layer=0))
    out = CausalLMOutput(loss=torch.tensor(1.0), logits=torch.zeros(2, 5))
    out["past_key_values"] = both  # as a seq2seq model's output holds it
    info = stats(out)
    assert info["tensors"] == 2 + 8 and info["complete"] is True
    assert info["nbytes"] == 4 + 40 + 8 * 2 * 4 * 10 * 8 * 4
    assert info["nan_in"] == ["'past_key_values'"]
    assert stats(both)["nan_in"] == ["cross_attention_cache"]


def test_a_container_holding_itself_is_walked_once():
    history = {"loss": torch.tensor(2.0)}
    history["self"] = history  # a cycle: its tensor is one tensor, seen once
    assert summarize(history) == "dict[2 items, 1 tensor] f32 cpu 4 B"


def test_a_user_dict_is_read_through_its_data_without_running_its_methods():
    from collections import OrderedDict, UserDict

    class Recent(UserDict):
        reads = 0

        def __getitem__(self, key):  # an LRU: every read reorders
            Recent.reads += 1
            self.data.move_to_end(key)
            return self.data[key]

    recent = Recent()
    recent.data = OrderedDict(a=torch.ones(2), b=torch.zeros(2), c=torch.tensor([math.nan]))
    info = stats(recent)
    assert info["tensors"] == 3 and info["nan_in"] == ["'c'"] and info["len"] == 3
    assert Recent.reads == 0 and list(recent.data) == ["a", "b", "c"]


def test_a_long_list_of_numbers_below_the_depth_bound_hides_no_tensor():
    history = {"train": {"loss": [0.5] * 2500}}
    line = summarize({"weights": torch.ones(3), "history": history, "bias": torch.zeros(2)})
    assert line.startswith("dict[3 items, 2 tensors] f32 cpu 20 B"), line  # complete: nothing unseen
    config = {"train": {"schedule": {"milestones": [30, 60]}}}
    assert stats({"config": config, "weights": torch.ones(3)})["complete"] is True


def test_a_checkpoint_with_optimizer_state_is_walked_whole():
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    info = stats({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    assert info["complete"] is True and info["tensors"] == 2 + 2 * 3  # weights, then step/exp_avg/exp_avg_sq


def test_a_hybrid_cache_flags_a_nan_in_its_recurrent_state():
    cache_utils = pytest.importorskip("transformers.cache_utils")
    if not hasattr(cache_utils, "LinearAttentionLayer"):
        pytest.skip("this transformers has no linear-attention cache layer")
    linear, attention = cache_utils.LinearAttentionLayer(), cache_utils.DynamicLayer()
    cache = cache_utils.DynamicCache.__new__(cache_utils.DynamicCache)
    cache_utils.Cache.__init__(cache, layers=[linear, attention])
    linear.update_conv_state(torch.randn(1, 8, 4))
    state = torch.randn(1, 2, 4, 4)
    state[0, 0, 0, 0] = math.nan
    linear.update_recurrent_state(state)
    attention.update(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))
    assert stats(cache)["nan_in"] == ["[0]"]
