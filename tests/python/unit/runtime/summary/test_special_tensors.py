"""Tensors that cannot be read the ordinary way keep their header, and say why when they have no
statistics; no warning reaches the user and no user ``__torch_function__`` runs."""

import math
import warnings

import pytest
import torch

from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")


def made_quietly(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own prototype/deprecation notes on creation
        return make()


def assert_no_warning(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    assert not caught, [str(w.message) for w in caught]
    return out


def test_fake_tensor_keeps_its_header():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.randn(3, 4)
    line = assert_no_warning(lambda: summarize(fake))
    assert line.startswith("FakeTensor[3, 4] f32 cpu 48 B") and "fake (no data)" in line


def test_uninitialized_parameter_of_a_lazy_module():
    layer = torch.nn.LazyLinear(4)
    line = assert_no_warning(lambda: summarize(layer.weight))
    assert line.startswith("UninitializedParameter f32 cpu") and "uninitialized" in line
    assert "cannot summarize" not in line


@pytest.mark.parametrize("transform", ["vmap", "grad", "jvp"])
def test_tensors_inside_functorch_transforms(transform):
    seen = []

    def f(x):
        seen.append((stats(x), summarize(x)))
        return (x * x).sum()

    def run(fn):
        if transform == "vmap":
            torch.func.vmap(fn)(x)
        elif transform == "grad":
            torch.func.grad(fn)(x)
        else:
            torch.func.jvp(fn, (x,), (torch.ones_like(x),))

    x = torch.arange(6.0).reshape(2, 3)
    made_quietly(lambda: run(lambda v: (v * v).sum()))  # torch's own first-call notes (jit deprecation)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(f)
    assert not caught, [str(w.message) for w in caught]
    info, line = seen[0]
    assert info["kind"] == "tensor" and "cannot summarize" not in line
    if transform == "vmap":  # each call sees one row; the statistics cover the batch it belongs to
        assert info["shape"] == [3] and info["max"] == 5.0 and "vmap" in line
    else:
        assert info["shape"] == [2, 3] and info["mean"] == 2.5 and info["max"] == 5.0


def test_masked_tensor_uses_unmasked_values_only():
    data = torch.tensor([1.0, 2.0, -2000.0, 4.0, 8.0])
    mask = torch.tensor([True, True, False, True, True])
    masked = made_quietly(lambda: torch.masked.masked_tensor(data, mask))
    info = assert_no_warning(lambda: stats(masked))
    assert info["type"] == "MaskedTensor" and info["count"] == 4 and info["min"] == 1.0 and info["mean"] == 3.75
    assert "4 unmasked of 5" in summarize(masked)


def test_dtensor_if_it_can_be_built():
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available():
        pytest.skip("torch.distributed is not built in")
    from torch.testing._internal.distributed.fake_pg import FakeStore

    try:
        from torch.distributed.tensor import DeviceMesh, Shard, distribute_tensor

        if not dist.is_initialized():
            dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
        mesh = DeviceMesh("cpu", [0, 1])
        dt = made_quietly(lambda: distribute_tensor(torch.arange(8.0).reshape(4, 2), mesh, [Shard(0)]))
    except Exception as exc:  # this build cannot make one without a real group
        pytest.skip(f"no DTensor here: {exc}")
    line = assert_no_warning(lambda: summarize(dt))
    assert line.startswith("DTensor[4, 2] f32") and "cannot summarize" not in line


def test_inference_meta_sparse_quantized_nested_keep_their_header():
    with torch.inference_mode():
        inference = torch.arange(4.0)
    quantized = made_quietly(lambda: torch.quantize_per_tensor(torch.tensor([0.0, 0.5, 1.0]), 0.1, 3, torch.quint8))
    nested = made_quietly(lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]))
    sparse = made_quietly(lambda: torch.eye(3).to_sparse())
    lines = assert_no_warning(
        lambda: [summarize(t) for t in (inference, torch.empty(2, 2, device="meta"), sparse, quantized, nested)]
    )
    assert lines[0].startswith("tensor[4] f32 cpu 16 B inference")
    assert lines[1] == "tensor[2, 2] f32 meta 16 B no data (meta)"
    assert lines[2].startswith("tensor[3, 3] f32 cpu sparse_coo")
    assert "q(scale=0.1, zero_point=3)" in lines[3] and "[0, 1]" in lines[3]
    assert lines[4].startswith("NestedTensor[2, ?]") or "nested" in lines[4]


class Counting(torch.Tensor):
    """A user subclass whose ``__torch_function__`` must never run inside a summary."""

    calls = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def test_user_torch_function_is_never_reentered():
    t = torch.randn(300, 20).as_subclass(Counting)
    t[0, 0] = math.nan
    Counting.calls = 0
    line = summarize(t)
    info = stats(t)
    summarize([t, t])
    assert Counting.calls == 0
    assert line.startswith("Counting[300, 20] f32 cpu") and "NaN×1" in line and info["nan"] == 1


def test_a_failure_reading_values_keeps_the_header():
    class Unreadable(torch.Tensor):
        def as_subclass(self, cls):
            raise RuntimeError("storage is elsewhere")

    t = torch.zeros(2, 3).as_subclass(Unreadable)
    info = stats(t)
    assert info["kind"] == "tensor" and info["shape"] == [2, 3] and info["dtype"] == "f32"
    assert info["note"].startswith("no statistics: RuntimeError: storage is elsewhere")
    assert summarize(t).startswith("Unreadable[2, 3] f32 cpu 24 B no statistics: RuntimeError")


def test_jagged_nested_tensor_gets_its_statistics_and_size():
    rows = [torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[5.0, 6.0]])]
    jagged = made_quietly(lambda: torch.nested.nested_tensor(rows, layout=torch.jagged))
    # all six values are real elements (no padding): they are the tensor's statistics
    line = assert_no_warning(lambda: summarize(jagged))
    assert line.startswith("NestedTensor[2, *, 2] f32 cpu jagged 48 B μ=3.5 "), line  # 24 B values, 24 B offsets
    assert "no statistics" not in line and stats(jagged)["min"] == 1.0


def test_a_narrowed_jagged_tensor_is_not_summarised_over_its_padding():
    padded = torch.full((3, 6), math.nan)  # padding that no row reaches
    lengths = torch.tensor([2, 4, 3])
    for i, n in enumerate(lengths.tolist()):
        padded[i, :n] = torch.arange(n, dtype=torch.float32)
    narrowed = made_quietly(lambda: torch.nested.narrow(padded, 1, 0, lengths, layout=torch.jagged))
    line = assert_no_warning(lambda: summarize(narrowed))
    assert "NaN" not in line and "jagged" in line, line  # the NaN is padding, not an element
