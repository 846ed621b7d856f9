"""The one line for every kind of object, and the JSON-able dict behind it."""

import json
import math
import re

import numpy as np
import pytest
import torch

import torchdoctor
from support.paths import PYBACKEND
from torchdoctor.runtime.summary.api import stats, summarize, summarize_if_ours

pytestmark = pytest.mark.filterwarnings("error")


def one_line(text):
    assert "\n" not in text and "\x1b" not in text, repr(text)  # no newlines, no ANSI colour
    return text


def test_public_api_is_lazy_and_reexported():
    assert torchdoctor.summarize is summarize and torchdoctor.stats is stats
    assert torchdoctor.runtime.summarize is summarize


def test_float_tensor_line_has_every_part():
    t = torch.linspace(-4, 4, 64 * 3 * 32 * 32).reshape(64, 3, 32, 32)
    t.view(-1)[:12] = math.nan
    text = one_line(summarize(t))
    assert text.startswith("tensor[64, 3, 32, 32] f32 cpu 768 KiB ⚠ NaN×12 μ=")
    assert re.search(r"σ=\S+ \[-4(\.\d+)?, 4\]$", text), text


def test_markers_and_small_values():
    assert summarize(torch.zeros(10, 10)) == "tensor[10, 10] f32 cpu 400 B all zeros"
    assert summarize(torch.full((5,), 3.5)) == "tensor[5] f32 cpu 20 B constant 3.5 x=[3.5, 3.5, 3.5, 3.5, 3.5]"
    assert (
        summarize(torch.tensor([1.0, math.inf, -math.inf]))
        == "tensor[3] f32 cpu 12 B ⚠ +Inf×1 -Inf×1 x=[1, +Inf, -Inf]"
    )
    assert summarize(torch.full((20,), math.nan)) == "tensor[20] f32 cpu 80 B ⚠ NaN×20 (all)"
    assert summarize(torch.tensor(2.302585)) == "tensor[] f32 cpu 2.30258"  # the f32 value is 2.3025849
    assert summarize(torch.empty(0, 3)) == "tensor[0, 3] f32 cpu 0 B empty"
    assert summarize(torch.empty(2, 2, device="meta")) == "tensor[2, 2] f32 meta 16 B no data (meta)"


@pytest.mark.parametrize(
    "dtype, short",
    [
        (torch.float16, "f16"),
        (torch.bfloat16, "bf16"),
        (torch.float64, "f64"),
        (torch.int8, "i8"),
        (torch.int32, "i32"),
        (torch.uint8, "u8"),
        (torch.complex64, "c64"),
        (torch.float8_e4m3fn, "f8e4m3fn"),
    ],
)
def test_dtypes_are_short(dtype, short):
    text = one_line(summarize(torch.arange(1, 20).to(dtype)))
    assert text.startswith(f"tensor[19] {short} cpu ") and ("μ=10 " in text), text


def test_bool_and_complex():
    assert summarize(torch.tensor([True, False, True, True] * 3)) == "tensor[12] bool cpu 12 B True×9 (75%)"
    assert summarize(torch.zeros(9, dtype=torch.bool)) == "tensor[9] bool cpu 9 B all False"
    assert "|z| μ=5 " in summarize(torch.full((9,), 3 + 4j).to(torch.complex64)) or "|z| constant 5" in summarize(
        torch.full((9,), 3 + 4j).to(torch.complex64)
    )


def test_views_sparse_and_expanded():
    base = torch.arange(12.0).reshape(3, 4)
    assert summarize(base.t()) == "tensor[4, 3] f32 cpu 48 B non-contiguous μ=5.5 σ=3.61 [0, 11] zeros=8.33%"
    assert summarize(torch.arange(4.0).expand(1000, 4)).startswith(
        "tensor[1000, 4] f32 cpu 15.6 KiB expanded×1000 (16 B stored) μ=1.5"
    )
    eye = torch.eye(100).to_sparse()
    assert summarize(eye) == "tensor[100, 100] f32 cpu sparse_coo 1.95 KiB nnz=100 (1%) μ=0.01 σ=0.0995 [0, 1]"


def test_autograd_parts():
    leaf = torch.ones(3, requires_grad=True)
    assert summarize(leaf).endswith("requires_grad grad=None")
    out = (leaf * 2).sum()
    assert summarize(out) == "tensor[] f32 cpu 6 grad_fn=SumBackward0"
    out.backward()
    assert summarize(leaf).endswith("requires_grad | grad constant 2 x=[2, 2, 2]")
    param = torch.nn.Parameter(torch.ones(2, 2))
    assert summarize(param).endswith("grad=None") and "requires_grad" not in summarize(param)
    param.grad = torch.tensor([[1.0, math.nan], [0.0, 0.0]])
    assert (
        summarize(param)
        == "Parameter[2, 2] f32 cpu 16 B constant 1 x=[1, 1, 1, 1] | grad ⚠ NaN×1 μ=0.333 σ=0.577 [0, 1] x=[1, NaN, 0, 0]"
    )
    frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    assert summarize(frozen).endswith(" frozen")


def test_numpy_arrays():
    assert summarize(np.arange(12.0).reshape(3, 4)) == "ndarray[3, 4] f64 96 B μ=5.5 σ=3.61 [0, 11] zeros=8.33%"
    assert (
        summarize(np.array([1.0, np.nan, np.inf], dtype=np.float32))
        == "ndarray[3] f32 12 B ⚠ NaN×1 +Inf×1 x=[1, NaN, +Inf]"
    )
    assert summarize(np.array([1, "a", None], dtype=object)) == "ndarray[3] object 24 B no statistics for dtype object"
    assert (
        summarize(np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]))
        == "ndarray[2] struct{a,b} 16 B no statistics for dtype struct{a,b}"
    )
    assert summarize(np.array([True, False])) == "ndarray[2] bool 2 B True×1 (50%)"
    assert summarize(np.broadcast_to(np.arange(3.0), (1000, 3))).startswith(
        "ndarray[1000, 3] f64 23.4 KiB expanded×1000 (24 B stored) μ=1 "
    )
    assert (
        summarize(np.float16(1.5) * np.ones(3, dtype=np.float16)) == "ndarray[3] f16 6 B constant 1.5 x=[1.5, 1.5, 1.5]"
    )


def test_containers():
    three = [torch.zeros(64, 10), torch.ones(64, 10), torch.randn(64, 10)]
    assert summarize(three) == "list[3 tensors] each [64, 10] f32 cpu 7.5 KiB"
    batch = {
        "logits": torch.tensor([1.0, math.nan]),
        "labels": torch.arange(2),
        "mask": torch.ones(2, dtype=torch.bool),
        "loss": torch.tensor(0.5),
    }
    assert summarize(batch) == "dict[4 tensors] bool/f32/i64 cpu 30 B ⚠ NaN in 'logits'"
    assert summarize((torch.zeros(2), 3)) == "tuple[2 items, 1 tensor] f32 cpu 8 B"
    # the item is a list holding the tensor: both are said
    assert summarize({"outer": [torch.tensor([math.inf])]}) == "dict[1 item, 1 tensor] f32 cpu 4 B ⚠ Inf in 'outer'"
    assert summarize_if_ours([1, 2]) is None and summarize_if_ours({}) is None
    assert summarize([np.zeros(3), np.ones(3)]) == "list[2 arrays] each [3] f64 48 B"


def test_module_line():
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(100, 100),
                torch.nn.ReLU(),
                torch.nn.Linear(100, 20),
                torch.nn.ReLU(),
                torch.nn.Linear(20, 2),
            )

    model = MLP()
    assert summarize(model) == "MLP 6 modules, 12.2K params cpu train"
    model.eval()
    model.net[0].weight.requires_grad_(False)
    model.net[2].train()
    assert summarize(model) == "MLP 6 modules, 12.2K params (10K frozen) cpu eval (1 submodule in train)"
    with torch.no_grad():
        model.net[4].bias[0] = math.nan
    model.net[0].bias.grad = torch.full((100,), math.inf)
    assert summarize(model).endswith("⚠ NaN/Inf in net.4.bias ⚠ NaN/Inf in grad of net.0.bias")
    assert summarize(torch.nn.ReLU()) == "ReLU 0 params train"
    assert summarize(torch.nn.Linear(2, 2).half()) == "Linear 6 params f16 cpu train"
    lazy = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.Linear(4, 2))
    assert summarize(lazy) == "Sequential 2 modules, 10 params (+2 uninitialized lazy) cpu train"


def test_stats_are_json():
    subjects = [
        torch.tensor([1.0, math.nan, math.inf]),
        torch.tensor([1 + 2j]),
        torch.nn.Linear(2, 2),
        [torch.zeros(1)],
        np.array([np.nan]),
        torch.tensor(math.nan),
        object(),
    ]
    for subject in subjects:
        json.dumps(stats(subject), allow_nan=False)
    assert stats(torch.tensor([1.0, math.nan]))["values"] == [1.0, "NaN"]
    assert stats(object())["kind"] == "other"


def test_close_extremes_get_enough_digits():
    assert summarize(torch.tensor([999.9961, 1000.0])).startswith(
        "tensor[2] f32 cpu 8 B μ=999.998 σ=0.00276 [999.996, 1000]"
    )


def test_container_walks_are_bounded():
    from torchdoctor.runtime.summary import container_info

    deep = [[[0] * 1000 for _ in range(1000)]]  # a million ints: looked at 2000 at most
    assert stats(deep)["kind"] == "other"
    info = stats([torch.zeros(1)] + deep)
    assert info["tensors"] == 1 and info["complete"] is False
    many = [torch.zeros(1)] * (container_info.MAX_LEAVES + 5)
    assert stats(many)["tensors"] == container_info.MAX_LEAVES
    assert summarize(many).endswith("(partly checked)")


def test_numpy_only_program_never_imports_torch(tmp_path):
    import os
    import subprocess
    import sys

    code = (
        "import sys, numpy, torchdoctor; "
        "print(torchdoctor.summarize(numpy.arange(6.0).reshape(2, 3))); "
        "print(torchdoctor.summarize([numpy.zeros(2)])); print('torch' in sys.modules)"
    )
    backend = PYBACKEND
    env = dict(os.environ, PYTHONPATH=str(backend))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.splitlines() == [
        "ndarray[2, 3] f64 48 B μ=2.5 σ=1.87 [0, 5] x=[0, 1, 2, 3, 4, 5]",
        "list[1 array] f64 16 B",
        "False",
    ], out.stderr
