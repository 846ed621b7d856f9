"""What the tensor line says beyond the statistics: zeros, layout, quantization, inference."""

import warnings

import pytest
import torch

from torchdoctor.runtime.summary.api import summarize
from torchdoctor.runtime.summary.render import render

pytestmark = pytest.mark.filterwarnings("error")


def test_share_of_zeros_for_a_relu_output_and_a_pruned_weight():
    relu = torch.tensor([-1.0, 2.0, -3.0, 4.0] * 100).relu()
    assert "zeros=50%" in summarize(relu)
    pruned = torch.ones(1000)
    pruned[:900] = 0
    assert "zeros=90%" in summarize(pruned)


def test_no_zeros_word_when_it_says_nothing():
    assert "zeros" not in summarize(torch.randn(1000, generator=torch.Generator().manual_seed(0)))
    assert "zeros" not in summarize(torch.arange(100))  # integers: 0 is an ordinary label
    assert summarize(torch.zeros(10)).endswith("all zeros")


def test_layout_words():
    nchw = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    assert " channels_last " in summarize(nchw)
    assert " non-contiguous " in summarize(torch.randn(4, 6).t())
    assert "contiguous" not in summarize(torch.randn(4, 6))
    expanded = summarize(torch.arange(3.0).expand(1000, 3))
    assert "expanded×1000 (12 B stored)" in expanded and "non-contiguous" not in expanded


def test_quantized_and_inference_words():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = torch.quantize_per_tensor(torch.tensor([0.0, 0.5, 1.0]), 0.1, 3, torch.quint8)
    assert "q(scale=0.1, zero_point=3)" in summarize(q)
    with torch.inference_mode():
        t = torch.ones(3)
    assert summarize(t).startswith("tensor[3] f32 cpu 12 B inference")


def test_render_of_a_header_only_line():
    info = {"kind": "tensor", "type": "FakeTensor", "shape": [2], "dtype": "f32", "device": "cpu", "nbytes": 8}
    assert render(dict(info, note="fake (no data)")) == "FakeTensor[2] f32 cpu 8 B fake (no data)"


def test_one_item_is_singular():
    from torchdoctor.runtime.summary.api import stats

    groups = [{"params": [torch.zeros(2), torch.ones(2)], "lr": 0.1}]  # an optimizer's param_groups
    assert render(stats(groups)).startswith("list[1 item, 2 tensors] ")


def test_an_uncoalesced_sparse_tensor_says_how_many_positions_its_density_counts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on unchecked sparse invariants
        twice = torch.sparse_coo_tensor(torch.tensor([[0, 0], [1, 1]]), torch.tensor([1.0, 2.0]), (3, 3))
    # two stored entries at one position: 1 of 9 positions is 11.1%, not 2 of 9
    assert "sparse_coo 40 B nnz=2 (1 position, 11.1%) " in summarize(twice)
    assert "nnz=1 (11.1%)" in summarize(twice.coalesce())


def test_a_sparse_embedding_gradient_counts_its_distinct_rows_as_positions():
    embedding = torch.nn.Embedding(10, 4, sparse=True)
    embedding(torch.tensor([1, 1, 3])).sum().backward()  # row 1 twice: 3 index entries, 2 rows
    line = summarize(embedding.weight.grad)
    assert "nnz=3 (2 positions, 20%)" in line, line  # 8 of 40 elements; not "8 positions"
    hybrid = torch.randn(3, 4).to_sparse(sparse_dim=1)  # coalesced, each index once
    assert "nnz=3 (100%)" in summarize(hybrid)


def test_items_are_said_unless_they_are_the_tensors_themselves():
    model = torch.nn.Linear(3, 2)  # a checkpoint of 2 items holding 2 tensors, none of them an item
    assert summarize({"model": model.state_dict(), "epoch": 3}).startswith("dict[2 items, 2 tensors] ")
    assert summarize([torch.zeros(2), torch.ones(2)]).startswith("list[2 tensors] ")
