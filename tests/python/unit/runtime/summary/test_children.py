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


def test_a_failed_read_is_that_child_alone():
    class Broken(torch.Tensor):
        @property
        def shape(self):
            raise RuntimeError("boom")

    children = tensor_children(torch.zeros(2).as_subclass(Broken))
    assert [c[0] for c in children][:4] == ["shape", "dtype", "device", "layout"]
    assert "boom" in children[0][1] and children[0][2] is None  # says why, no evaluate name
    assert children[1][1] == torch.float32


# -- issue 20: odd tensors keep their header; modules list curated children ------------------------

from torchdoctor.runtime.summary.children import RawAttributes, can_expand, children_of  # noqa: E402
from torchdoctor.runtime.summary.render import WARN  # noqa: E402

HEADER = ["shape", "dtype", "device", "layout"]


def names_of(children):
    return [c[0] for c in children]


def test_inference_mode_tensor_lists_its_children():
    with torch.inference_mode():
        t = torch.ones(3, 4)
    kids = named(t)
    assert names_of(tensor_children(t))[:4] == HEADER and "error" not in kids
    assert kids["inference"] == (True, ".is_inference()") and "version" not in kids  # no version counter
    assert kids["values[:3, :4]"][0][0] == [1, 1, 1, 1]


def test_uninitialized_parameter_says_so_and_keeps_its_header():
    lazy = torch.nn.LazyLinear(3)
    kids = tensor_children(lazy.weight)
    assert names_of(kids)[:4] == HEADER and "error" not in names_of(kids)
    assert kids[0][1].startswith("<unavailable: ")  # the shape: there is none yet
    assert dict((n, v) for n, v, _ in kids)["dtype"] == torch.float32
    assert "first forward" in dict((n, v) for n, v, _ in kids)["note"]


def test_fake_tensor_lists_its_header():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.empty(3, 4)
    kids = tensor_children(fake)
    assert names_of(kids)[:4] == HEADER and "error" not in names_of(kids)
    assert kids[0][1] == torch.Size([3, 4])


def test_functorch_wrapped_tensors_list_their_header():
    seen = {}

    def inside(x):
        seen["grad"] = tensor_children(x)
        return x.sum()

    def batched(x):
        seen["vmap"] = tensor_children(x)
        return x

    torch.func.grad(inside)(torch.ones(3))
    torch.vmap(batched)(torch.ones(2, 3))
    for key in ("grad", "vmap"):
        assert names_of(seen[key])[:4] == HEADER and "error" not in names_of(seen[key]), key


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.bn = torch.nn.BatchNorm1d(2)
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)])
        self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(2, 1)})
        self.scale = torch.nn.Parameter(torch.ones(1))


def test_module_children_are_curated():
    net = Net().eval()
    kids = {name: (value, suffix) for name, value, suffix in children_of(net)}
    assert list(kids) == ["scale", "fc", "bn", "blocks", "heads", "mode", "device", "dtype", "raw attributes"]
    assert kids["scale"] == (net.scale, ".scale") and kids["fc"] == (net.fc, ".fc")
    assert kids["mode"] == ("eval", None)
    assert kids["device"][0] == torch.device("cpu") and kids["dtype"][0] == torch.float32
    assert not any(n in kids for n in ("T_destination", "dump_patches", "forward", "_parameters"))
    assert can_expand(Net) and can_expand(torch.Tensor) and not can_expand(int)


def test_module_children_name_containers_by_index_and_key():
    net = Net()
    blocks = {n: s for n, _, s in children_of(net.blocks)}
    assert blocks["0"] == "[0]" and blocks["1"] == "[1]"
    assert {n: s for n, _, s in children_of(net.heads)}["cls"] == "['cls']"


def test_module_children_show_buffers_with_their_summaries():
    bn = torch.nn.BatchNorm1d(2)
    with torch.no_grad():
        bn.running_mean[0] = math.nan
    kids = {name: value for name, value, _ in children_of(bn)}
    assert list(kids)[:5] == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    from torchdoctor import summarize

    assert WARN in summarize(kids["running_mean"])  # the child is the tensor: its line warns


def test_raw_attributes_fold_the_rest():
    net = Net()
    raw = dict((n, v) for n, v, _ in children_of(net))["raw attributes"]
    assert isinstance(raw, RawAttributes)
    assert "training" in dir(raw) and "_parameters" in dir(raw) and raw.training is net.training
    assert repr(raw).endswith("attributes of Net")


def test_a_module_that_refuses_reads_still_lists_its_raw_attributes():
    class Odd(torch.nn.Module):
        def named_parameters(self, *a, **k):
            raise RuntimeError("no")

    kids = names_of(children_of(Odd()))
    assert kids[0] == "error" and kids[-1] == "raw attributes"


class Logged(torch.Tensor):
    """A user subclass logging every op it sees: listing its children must not add to the log."""

    calls = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def test_children_of_a_subclass_never_reenter_its_torch_function():
    t = torch.arange(12.0).reshape(3, 4).as_subclass(Logged)
    Logged.calls = 0
    kids = named(t)
    assert Logged.calls == 0
    assert kids["shape"][0] == (3, 4) and kids["stride"][0] == (4, 1)
    assert kids["values[:3, :4]"][0][1] == [4, 5, 6, 7]


def test_children_of_a_masked_tensor_warn_nothing():
    from torch.masked import masked_tensor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its prototype note on creation is torch's, not ours
        masked = masked_tensor(torch.arange(4.0), torch.tensor([True, False, True, True]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kids = named(masked)
    assert not caught, [str(w.message) for w in caught]
    assert kids["stats"][0]["count"] == 3  # the unmasked values, as on the line
