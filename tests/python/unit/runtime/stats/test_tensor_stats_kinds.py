"""How each kind is read: native-dtype extremes, nothing the size of the tensor converted, memory
order, bool by count_nonzero, exact integer extremes and zeros, only small tables to the host."""

import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from torchdoctor.runtime.stats import byte_stats, float_pass, guard, raw_pass, tensor_stats
from torchdoctor.runtime.stats.cache import VALUE_STATS
from torchdoctor.runtime.stats.tensor_stats import value_stats
from torchdoctor.runtime.summary.api import stats

pytestmark = pytest.mark.filterwarnings("error")

N = 2_500_003  # several blocks (of floats too: 2**20 of them), and a ragged last one


@pytest.fixture(autouse=True)
def one_block_reader(monkeypatch):
    """A dispatch mode sees the ops of its own thread only, and on an idle machine the runtime
    shares a big tensor's blocks with a second thread (``parallel.py``): the ops counted here
    would then depend on the load (one run at load 0.6 counted 6 of 10 blocks)."""
    monkeypatch.setattr(guard, "idle_threads", lambda current, own=None: 1)


class Ops(TorchDispatchMode):
    """Every aten op: (name, input dtypes, largest output numel, contiguity of the first input)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = [a for a in tree_leaves(args) if isinstance(a, torch.Tensor)]
        outputs = [o for o in tree_leaves(out) if isinstance(o, torch.Tensor)]
        self.seen.append(
            (
                func.__name__.split(".")[0],
                [str(a.dtype) for a in inputs],
                max([o.numel() for o in outputs] or [0]),
                inputs[0].is_contiguous() if inputs else None,
            )
        )
        return out


def make(dtype):
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(N, generator=g) > 0.5
    if dtype.is_floating_point:
        return torch.randn(N, generator=g).relu().to(dtype)
    return torch.randint(0, 200, (N,), generator=g).to(dtype)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.bfloat16, torch.float16, torch.float32, torch.bool])
def test_nothing_the_size_of_the_tensor_is_made(dtype):
    t = make(dtype)
    dot = byte_stats.dot_applies(torch)  # its one-time probe is not counted below
    with Ops() as ops:
        got = value_stats(t)
    biggest = max(numel for _, _, numel, _ in ops.seen)
    floats = dtype.is_floating_point
    limit = float_pass.block(tensor_stats.BLOCK_CPU, {"work": torch.float32}) if floats else tensor_stats.BLOCK_CPU
    byte_block = (byte_stats.CHUNKS + 1) * byte_stats.K if dot else byte_stats.BLOCK  # the buffer ends with K ones
    bound = byte_block if dtype == torch.uint8 else limit + (float_pass.ROW if floats else raw_pass.ROW)
    assert biggest <= bound, [s for s in ops.seen if s[2] == biggest][:3]
    if dtype == torch.uint8:  # per run of K bytes one int8 product (or per block one histogram), no float
        names = [name for name, _, _, _ in ops.seen]
        assert names.count("_int_mm") == (-(-N // byte_stats.K) if dot else 0)
        assert names.count("bincount") == (0 if dot else -(-N // byte_stats.BLOCK))
        assert not any("float" in d for _, dtypes, _, _ in ops.seen for d in dtypes)
        assert got["min"] == int(t.min()) and got["max"] == int(t.max()) and got["mean"] == float(t.double().mean())
    elif dtype == torch.bool:  # one count_nonzero per block: no sum, no conversion
        assert {name for name, _, _, _ in ops.seen} <= {"count_nonzero", "stack", "sum", "_local_scalar_dense"}
        assert all("torch.bool" not in dtypes for name, dtypes, _, _ in ops.seen if name != "count_nonzero")
        assert got["true"] == int(t.sum()) and got["zeros"] == N - got["true"]
    else:  # extremes once per block: integers in their own dtype (exact); floats (ReLU outputs
        # here: no sign bit set) by the integer view of their bits, half floats of their own
        # (int16: read once from memory, before their float32 copy is made)
        amm = [dtypes[0] for name, dtypes, _, _ in ops.seen if name == "aminmax"]
        bits = torch.int16 if dtype in (torch.float16, torch.bfloat16) else torch.int32
        assert len(amm) == -(-N // limit) and set(amm) == {str(bits if floats else dtype)}


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16])
def test_integer_extremes_are_read_before_the_float64_copy(dtype):
    """Each block's native ``aminmax`` reads it from memory first; its float64 copy then finds it
    in cache (``raw_pass._Reader.read``)."""
    t = make(dtype)
    with Ops() as ops:
        got = value_stats(t)
    reads = [name for name, dtypes, _, _ in ops.seen if name in ("aminmax", "copy_") and dtypes[-1] == str(dtype)]
    assert len(reads) >= 4 and reads == ["aminmax", "copy_"] * (len(reads) // 2)
    assert (got["min"], got["max"]) == (int(t.min()), int(t.max()))
    assert got["mean"] == pytest.approx(float(t.double().mean()), rel=1e-12)


@pytest.mark.parametrize("how", ["transpose", "permute"])
def test_views_are_read_in_memory_order(how):
    base = torch.randn(64, 300, 70, generator=torch.Generator().manual_seed(2))
    view = base.transpose(0, 2) if how == "transpose" else base.permute(1, 2, 0)
    with Ops() as ops:
        got = value_stats(view)
    assert all(contiguous for name, _, _, contiguous in ops.seen if name == "aminmax")
    ref = base.double()
    assert got["min"] == float(ref.min()) and got["max"] == float(ref.max())
    assert got["mean"] == pytest.approx(float(ref.mean()), abs=1e-6) and got["std"] == pytest.approx(
        float(ref.std()), rel=1e-5
    )


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "int64"])
def test_wide_integers_keep_exact_extremes_at_any_size(name):
    dtype = getattr(torch, name)
    info = torch.iinfo(dtype) if name != "uint64" else None
    top = 2**64 - 1 if name == "uint64" else info.max
    low = 0 if name.startswith("uint") else info.min
    t = torch.zeros(N, dtype=torch.int64 if name == "int64" else torch.uint8).to(dtype)
    if name == "uint64":  # torch cannot take 2**64 - 1 as a Python int: write its bits
        t.view(torch.int64)[17] = -1
        t[N - 1] = 1
    else:
        t[17], t[N - 1] = top, low + 1 if name.startswith("uint") else low
    got = stats(t)
    assert got["max"] == top and got["min"] == (0 if name.startswith("uint") else low)
    assert got["count"] == N and "zeros" not in got  # integers: 0 is an ordinary value


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_zeros_of_floats_are_counted_exactly(dtype, sign):
    t = make(dtype) * sign  # a ReLU output (min 0), and its negation (max 0)
    t[5], t[7], t[9] = 0, math.nan, -0.0
    t[N - 1] = -3.0  # a block with both signs
    got = stats(t)
    assert got["zeros"] == int((t == 0).sum())


def test_integers_count_no_zeros():
    assert "zeros" not in stats(torch.zeros(10**6, dtype=torch.uint8)) and "zeros" not in stats(torch.arange(5))


def test_only_small_tables_reach_the_host(monkeypatch):
    """The CUDA promise checked on the CPU: no .tolist()/.numpy()/.cpu() of anything big."""
    moved = []
    for method in ("tolist", "numpy", "cpu"):
        original = getattr(torch.Tensor, method)

        def recording(self, *args, _original=original, _method=method, **kwargs):
            moved.append((_method, self.numel()))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, method, recording)
    for dtype in (torch.float32, torch.uint8, torch.int64, torch.bfloat16, torch.bool, torch.complex64):
        t = make(torch.float32).to(dtype) if dtype == torch.complex64 else make(dtype)
        t[3] = math.nan if dtype.is_floating_point or dtype.is_complex else t[3]
        VALUE_STATS.clear()
        stats(t)
    assert moved and max(numel for _, numel in moved) <= 1024, sorted(moved, key=lambda m: -m[1])[:3]


def test_the_thread_count_is_restored(monkeypatch):
    monkeypatch.setattr(guard, "idle_threads", lambda current: 1)
    before = torch.get_num_threads()
    seen = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (seen.append(n), real(n)))
    value_stats(torch.randn(guard.PARALLEL_FROM))
    assert torch.get_num_threads() == before
    assert seen == ([] if before == 1 else [1, before])
    seen.clear()
    value_stats(torch.randn(1000))  # small: torch runs it on one thread anyway, the count is left alone
    assert seen == [] and torch.get_num_threads() == before


@pytest.mark.parametrize("n", [1, 511, 512, 513, 4096, 70_001])
def test_true_values_are_counted_by_words_exactly(n):
    marks = torch.rand(n, generator=torch.Generator().manual_seed(n)) > 0.3
    marks[-1] = True  # the ragged end is counted too
    assert int(raw_pass.count_true(torch, marks)) == int(marks.sum())
    assert int(raw_pass.count_true(torch, torch.ones(n, dtype=torch.bool))) == n  # every lane full


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8])
def test_a_small_tensor_costs_a_handful_of_ops(dtype):
    """A model's thousands of small parameters: each is read whole, in float64, in about ten ops
    and one transfer to the host, not block by block (the fixed cost was ~3 ms a tensor)."""
    t = (torch.randn(64, 32, generator=torch.Generator().manual_seed(3)) * 50).to(dtype)
    with Ops() as ops:
        got = value_stats(t)
    assert len(ops.seen) <= 12, [name for name, *_ in ops.seen]
    ref = t.double()
    assert got["min"] == float(ref.min()) and got["max"] == float(ref.max())
    assert got["mean"] == pytest.approx(float(ref.mean()), rel=1e-12, abs=1e-12)
    assert got["std"] == pytest.approx(float(ref.std()), rel=1e-12)
    if dtype.is_floating_point:
        assert got["zeros"] == int((t == 0).sum())


@pytest.mark.parametrize("axis", [0, 1])
def test_a_per_channel_quantized_tensor_is_read_with_each_channels_scale(axis):
    import warnings

    values = torch.arange(12, dtype=torch.float32).reshape(4, 3) - 5
    channels = values.shape[axis]
    scales = torch.linspace(0.5, 1.0, channels, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated; still met in the wild
        q = torch.quantize_per_channel(values, scales, torch.zeros(channels, dtype=torch.long), axis, torch.qint8)
    VALUE_STATS.clear()
    out = value_stats(q)
    expected = q.dequantize().double()
    assert out["count"] == 12
    assert out["min"] == pytest.approx(float(expected.min())) and out["max"] == pytest.approx(float(expected.max()))
    assert out["mean"] == pytest.approx(float(expected.mean()), rel=1e-6)
