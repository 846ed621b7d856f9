"""What an expanded tensor lists in the Variables view, for every kind; never an exception."""

import math
import warnings

import pytest
import torch

from torchdoctor.runtime.summary.children import MAX_VALUES, bounded_index, tensor_children

pytestmark = pytest.mark.filterwarnings("error")


def named(t):
    return {name: (value, suffix) for name, value, suffix in tensor_children(t)}


def test_dense_children_in_order_with_evaluate_suffixes():
    t = torch.arange(12.0).reshape(3, 4)
    children = tensor_children(t)
    assert [c[0] for c in children] == [
        "shape",
        "dtype",
        "device",
        "layout",
        "memory",
        "stats",
        "requires_grad",
        "is_leaf",
        "stride",
        "contiguous",
        "version",
        "values[:3, :4]",
    ]
    kids = named(t)
    assert kids["values[:3, :4]"] == ([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], "[:3, :4]")
    assert kids["stats"][0]["max"] == 11 and kids["shape"] == (torch.Size([3, 4]), ".shape")


def test_autograd_children():
    leaf = torch.ones(2, requires_grad=True)
    out = leaf * 3
    kids = named(out)
    assert "grad" not in kids and kids["grad_fn"][1] == ".grad_fn"  # a non-leaf's .grad would warn
    out.sum().backward()
    assert torch.equal(named(leaf)["grad"][0], torch.full((2,), 3.0))


@pytest.mark.parametrize(
    "shape, index",
    [((5,), (5,)), ((1000,), (100,)), ((64, 3, 32, 32), (1, 1, 10, 10)), ((7, 200), (7, 10)), ((2, 1), (2, 1))],
)
def test_value_slice_is_bounded(shape, index):
    assert bounded_index(shape) == index
    total = 1
    for n in index:
        total *= n
    assert total <= MAX_VALUES


def test_image_batch_values_select_the_first_channel():
    kids = named(torch.zeros(64, 3, 32, 32))
    values, suffix = kids["values[0, 0, :10, :10]"]
    assert suffix == "[0, 0, :10, :10]" and len(values) == 10 and len(values[0]) == 10


def test_float32_values_read_as_typed():
    assert named(torch.tensor([0.1, 0.2]))["values[:2]"][0] == [0.1, 0.2]


def test_other_kinds():
    assert named(torch.tensor(2.5))["value"] == (2.5, ".item()")
    assert "values" not in " ".join(named(torch.empty(3, 0)))
    meta = named(torch.empty(4, device="meta"))
    assert meta["stats"][0]["note"] == "no data (meta)" and not any(k.startswith("values") for k in meta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sparse = torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.tensor([1.0, math.nan]), (5,))
        nested = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])
    kids = named(sparse)
    assert kids["stored values[:100]"][0] == [1.0, math.nan] or math.isnan(kids["stored values[:100]"][0][1])
    assert kids["stats"][0]["nan"] == 1
    assert named(nested)["shape"][0] == "[2, *]"
    fp8 = named(torch.tensor([0.5, 1.5]).to(torch.float8_e4m3fn))
    assert fp8["values[:2]"][0] == [0.5, 1.5]


def test_failure_becomes_an_error_child():
    class Broken(torch.Tensor):
        @property
        def shape(self):
            raise RuntimeError("boom")

    children = tensor_children(torch.zeros(2).as_subclass(Broken))
    assert children[0][0] == "error" and "boom" in children[0][1]
