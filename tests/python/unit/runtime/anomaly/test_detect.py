"""The per-tensor test: which tensors are read, what one aminmax says, exact counts for reports."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchdoctor.runtime.anomaly.detect import (
    EXPLOSION,
    MAX_TENSORS,
    NONFINITE,
    QUICK_FROM,
    ZERO,
    bad_counts,
    checkable,
    extremes,
    iter_tensors,
    quick_bound,
    verdict,
)

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "low, high, expected",
    [
        (NAN, NAN, NONFINITE),
        (-INF, 1.0, NONFINITE),
        (0.0, INF, NONFINITE),
        (-2e4, 1.0, EXPLOSION),
        (0.0, 1e4 + 1, EXPLOSION),
        (-1e4, 1e4, None),
        (0.0, 0.0, ZERO),
        (-1.0, 1.0, None),
        (0.0, 3.0, None),
    ],
)
def test_verdict(low, high, expected):
    assert verdict(low, high, 1e4) == expected


@pytest.mark.parametrize(
    "t, ok",
    [
        (torch.ones(3), True),
        (torch.ones(2, dtype=torch.float16), True),
        (torch.ones(2, dtype=torch.bfloat16), True),
        (torch.ones(2, dtype=torch.complex64), True),
        (torch.nn.Parameter(torch.ones(2)), True),
        (torch.ones(3, dtype=torch.int64), False),
        (torch.ones(2, dtype=torch.bool), False),
        (torch.ones(0), False),
        (torch.ones(2, device="meta"), False),
        (torch.ones(2, 2).to_sparse(), False),
    ],
)
def test_checkable(t, ok):
    assert checkable(t) is ok


def test_subclasses_are_not_read():
    class Tagged(torch.Tensor):
        pass

    assert not checkable(torch.ones(2).as_subclass(Tagged))


def test_extremes_of_views_complex_and_half():
    base = torch.arange(12.0).reshape(3, 4)
    assert extremes(base.t()[1:]) == (1.0, 11.0)
    assert extremes(torch.tensor([1 + 2j, -3 + 0j])) == (-3.0, 2.0)
    for dtype in (torch.float16, torch.bfloat16):
        low, high = extremes(torch.tensor([1.0, NAN], dtype=dtype))
        assert math.isnan(low) and math.isnan(high)


@settings(max_examples=50)
@given(st.lists(st.sampled_from([0.0, 1.5, -2.0, NAN, INF, -INF, 3e5]), min_size=1, max_size=40))
def test_verdict_agrees_with_plain_torch(values):
    t = torch.tensor(values)
    kind = verdict(*extremes(t), 1e4)
    if not torch.isfinite(t).all():
        assert kind == NONFINITE
    elif t.abs().max() > 1e4:
        assert kind == EXPLOSION
    elif (t == 0).all():
        assert kind == ZERO
    else:
        assert kind is None
    counts = bad_counts(t)
    assert counts == {
        "nan": int(torch.isnan(t).sum()),
        "posinf": int((t == INF).sum()),
        "neginf": int((t == -INF).sum()),
        "numel": len(values),
    }


def test_extremes_record_no_autograd_and_change_nothing():
    w = torch.randn(4, 4, requires_grad=True)
    out = w * 2
    version = out._version
    extremes(out)
    bad_counts(out)
    assert out._version == version and out.grad_fn.next_functions[0][0] is not None
    assert w.grad is None


def test_iter_tensors_walks_outputs_boundedly():
    a, b, c = torch.ones(1), torch.ones(2), torch.ones(3)
    assert list(iter_tensors((a, (b, c)))) == [a, b, c]
    assert list(iter_tensors({"logits": a, "n": 3, "mask": torch.ones(2, dtype=torch.bool)})) == [a]
    assert list(iter_tensors([[[[a]]]])) == []  # deeper than MAX_DEPTH
    assert len(list(iter_tensors([torch.ones(1)] * 100))) == MAX_TENSORS
    assert list(iter_tensors("text")) == [] and list(iter_tensors(None)) == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_quick_bound_is_the_sum_of_squares_and_says_nan_inf_and_zero(dtype):
    """The one-pass bound of a big CPU output: Σx² (so |x| <= its root), NaN or Inf where the
    tensor holds one, 0 for all zeros; None where it does not apply (small, strided, integers)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(QUICK_FROM * 2, generator=g, dtype=dtype)
    squares = quick_bound(x)
    assert squares == pytest.approx(float((x.double() ** 2).sum()), rel=1e-5)
    assert math.sqrt(squares) >= float(x.abs().max())
    spiked = x.clone()
    spiked[7] = 2e4  # one value past the default threshold: the bound says so
    assert quick_bound(spiked) > 1e4**2
    for special, check in ((NAN, math.isnan), (INF, math.isinf), (-INF, math.isinf)):
        bad = x.clone()
        bad[123] = special
        assert check(quick_bound(bad))
    assert quick_bound(torch.zeros(QUICK_FROM, dtype=dtype)) == 0.0
    huge = torch.full((QUICK_FROM,), 1e30 if dtype == torch.float32 else 1e200, dtype=dtype)
    assert quick_bound(huge) > 1e4**2  # squares past the float range: inf or huge, never a pass
    assert quick_bound(x[: QUICK_FROM - 1]) is None  # small: the exact read is as cheap
    assert quick_bound(x.view(2, -1).t()) is None  # not contiguous
    assert quick_bound(torch.ones(QUICK_FROM, dtype=torch.int64)) is None
    assert quick_bound(torch.ones(QUICK_FROM, dtype=torch.float16)) is None


def test_the_quick_bound_reads_a_module_output_of_any_shape_whole_and_records_no_history():
    """The norm runs on the output itself (no flattened view): every dimension counts, a NaN or
    an Inf anywhere in a batch x time x width output is seen, and an output that requires grad
    gets no autograd node from the read."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 64, QUICK_FROM // 128, generator=g).requires_grad_()
    squares = quick_bound(x)
    assert squares == pytest.approx(float((x.detach().double() ** 2).sum()), rel=1e-5)
    assert squares == pytest.approx(quick_bound(x.detach().reshape(-1)), rel=1e-6)
    for special, check in ((NAN, math.isnan), (INF, math.isinf)):
        bad = x.detach().clone()
        bad[3, 63, -1] = special  # the last value of the last row: past any first dimension
        assert check(quick_bound(bad))
    assert x.grad is None and x.grad_fn is None


def test_a_big_output_past_the_threshold_or_nan_is_reported_by_the_watch():
    """A Linear whose output holds QUICK_FROM values or more takes the one-pass bound: a value past
    the threshold and a NaN are still reported, with the module named."""
    from torchdoctor.runtime.anomaly import watch as anomaly_watch
    from torchdoctor.runtime.anomaly.config import from_mapping

    layer = torch.nn.Linear(64, 256)
    x = torch.randn(128, 64)  # 128 x 256 = 32k output values
    assert layer(x).numel() >= QUICK_FROM
    for poison, kind in ((1e6, "exploding_output"), (NAN, "nonfinite_output")):
        anomaly_watch.clear_reports()
        anomaly_watch.install(from_mapping({"mode": "log"}))
        try:
            with torch.no_grad():
                layer.bias[5] = poison
            layer(x)
        finally:
            anomaly_watch.uninstall()
            with torch.no_grad():
                layer.bias[5] = 0.0
        report = anomaly_watch.last_report()
        assert report is not None and report["kind"] == kind, report
        assert report["module_type"] == "Linear"


def test_inside_a_functorch_transform_the_thread_s_buffer_is_never_written():
    """torch 2.8 (the newest torch for Python 3.9) wrote a ``torch.func.grad`` wrapper into the buffer's
    views and left the buffer without storage: the next check of any output aborted the process. The
    extremes inside a transform are the plain reads, with the same values; outside, the buffer again."""
    from torchdoctor.runtime.anomaly import detect

    x = torch.tensor([[1.0, -2.0], [3.0, 0.5]])
    assert detect.cpu_extremes(x, 4) == (-2.0, 3.0)  # the buffer is made, and used
    calls = []
    plain_aminmax = detect._GRAD_MODE[2]
    detect._GRAD_MODE[2] = lambda *a, **kw: calls.append(sorted(kw)) or plain_aminmax(*a, **kw)
    seen = []

    def f(t):
        y = t * 1.0
        seen.append(detect.cpu_extremes(y, y.numel()))
        return y.sum()

    try:
        torch.func.grad(f)(x)
        assert seen == [(-2.0, 3.0)] and calls == [[]]  # no out= inside the transform
        assert detect.cpu_extremes(x, 4) == (-2.0, 3.0) and calls == [[], ["out"]]
    finally:
        detect._GRAD_MODE[2] = plain_aminmax
