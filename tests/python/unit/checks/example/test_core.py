"""checks/example/core.py: where predictions, own losses and classes are found in what a forward returns."""

from __future__ import annotations

import pytest
import torch

from torchdoctor.checks import example as E


class FakeModelOutput(dict):
    """A Hugging Face ModelOutput is an OrderedDict whose first key is the loss when there is one."""


def test_pick_output_prefers_logits_and_skips_a_scalar_loss():
    logits, loss = torch.randn(2, 5, 7), torch.tensor(1.5)
    assert E.pick_output(FakeModelOutput(loss=loss, logits=logits)) is logits
    assert E.pick_output((logits, loss)) is logits  # nanoGPT
    assert E.pick_output((loss, logits)) is logits
    h = (torch.zeros(1, 2, 3), torch.zeros(1, 2, 3))
    out = torch.randn(10, 7)
    assert E.pick_output((out, h)) is out  # an RNN's (output, hidden)
    assert E.pick_output(loss) is loss
    with pytest.raises(E.ExampleError):
        E.pick_output((None, "text"))


def test_own_loss_is_a_loss_key_or_the_scalar_beside_the_logits():
    logits, loss = torch.randn(2, 7), torch.tensor(0.3)
    assert E.own_loss(FakeModelOutput(loss=loss, logits=logits)) is loss
    assert E.own_loss(FakeModelOutput(loss=None, logits=logits)) is None  # HF without labels
    assert E.own_loss((logits, loss)) is loss
    assert E.own_loss((logits, None)) is None  # nanoGPT without targets
    assert E.own_loss(logits) is None and E.own_loss((loss,)) is None  # a lone scalar is an output, not "its loss"


@pytest.mark.parametrize(
    "out, target, dim",
    [
        ((8, 10), (8,), 1),
        ((8, 10, 32, 32), (8, 32, 32), 1),  # segmentation: torch's (B, C, H, W)
        ((8, 16, 65), (8, 16), -1),  # a language model's (B, T, V)
        ((16, 8, 65), (16, 8), -1),  # sequence-first (T, B, V)
        ((8, 10), (8, 10), None),
        ((8, 1, 65), (8, 16), None),  # nanoGPT's last-position logits against all the targets
    ],
)
def test_class_dim(out, target, dim):
    assert E.class_dim(torch.zeros(out), torch.zeros(target, dtype=torch.long)) == dim


def test_cross_entropy_for_both_layouts_matches_the_flattened_loss():
    g = torch.Generator().manual_seed(0)
    logits, t = torch.randn(4, 6, 11, generator=g), torch.randint(0, 11, (4, 6), generator=g)
    flat = torch.nn.functional.cross_entropy(logits.reshape(-1, 11), t.reshape(-1))
    assert torch.allclose(E.cross_entropy(logits, t), flat)
    x, y = torch.randn(4, 3, generator=g), torch.tensor([0, 2, 1, 1])
    assert torch.allclose(E.cross_entropy(x, y), torch.nn.functional.cross_entropy(x, y))


def test_tensors_in_and_map_tensors_walk_nests():
    nest = ({"a": torch.ones(1), "b": [torch.zeros(2), 3]}, (torch.ones(3),), None)
    assert [tuple(t.shape) for t in E.tensors_in(nest)] == [(1,), (2,), (3,)]
    doubled = E.map_tensors(nest, lambda t: t.double())
    assert all(t.dtype == torch.float64 for t in E.tensors_in(doubled))
    assert doubled[0]["b"][1] == 3 and doubled[2] is None and isinstance(doubled[1], tuple)


def test_batch_size_from_positional_or_keyword_inputs():
    """The first positional tensor decides; keyword inputs alone (a Hugging Face ``**batch``) give the first
    dimension they share, labels included, and none when they disagree (their order says nothing)."""
    ids, model = torch.zeros(4, 6, dtype=torch.long), torch.nn.Identity()
    assert E.Example(model, (ids,), kwargs={"mask": torch.ones(3, 6)}).batch_size() == 4
    hf = {"input_ids": ids, "attention_mask": torch.ones(4, 6), "labels": ids}
    assert E.Example(model, (), kwargs=hf).batch_size() == 4
    assert E.Example(model, (), kwargs={**hf, "temperature": torch.tensor(0.7)}).batch_size() == 4  # a scalar has none
    assert E.Example(model, (), kwargs={**hf, "position_ids": torch.arange(6)[None]}).batch_size() is None  # (1, T)
    own_loss = E.Example(model, (), targets=torch.zeros(5, dtype=torch.long), kwargs=hf, target_kwarg="targets")
    assert own_loss.batch_size() is None  # the targets go in as a keyword too, and say 5
    assert E.Example(model, (), kwargs={"scale": 2.0}).batch_size() is None
