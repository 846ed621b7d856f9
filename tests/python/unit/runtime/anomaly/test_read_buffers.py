"""The two-value read of :func:`detect.cpu_extremes` (one buffer per thread, autograd off) gives
what a detached ``aminmax`` and two ``.item()`` gave, and leaves autograd as it found it."""

from __future__ import annotations

import math
import threading

import pytest
import torch

from torchdoctor.runtime.anomaly.detect import cpu_extremes


def _plain(t):
    low, high = torch.aminmax(t.detach())
    return low.item(), high.item()


def _same(got, want):
    return all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, want))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_extremes_through_the_buffer_are_the_plain_ones(dtype):
    g = torch.Generator().manual_seed(0)
    t = (torch.randn(64, 64, generator=g) * 100).to(dtype)
    assert cpu_extremes(t, t.numel()) == _plain(t)
    t[3, 5] = float("nan")
    assert _same(cpu_extremes(t, t.numel()), _plain(t))
    t[3, 5], t[0, 0] = 1.0, float("-inf")
    assert cpu_extremes(t, t.numel()) == _plain(t)


def test_a_second_read_does_not_change_the_first():
    a, b = torch.full((4, 4), 2.0), torch.full((4, 4), -7.0)
    first = cpu_extremes(a, 16)
    cpu_extremes(b, 16)
    assert first == (2.0, 2.0)


def test_a_tensor_that_needs_grad_records_no_history_and_grad_mode_is_restored():
    x = torch.randn(8, 8, requires_grad=True)
    y = x * 2
    assert cpu_extremes(y, 64) == _plain(y)
    assert torch.is_grad_enabled()
    y.sum().backward()  # the graph is the user's alone: no node of ours was added to it
    assert torch.equal(x.grad, torch.full((8, 8), 2.0))
    with torch.no_grad():
        assert cpu_extremes(x, 64) == _plain(x)
        assert not torch.is_grad_enabled()


def test_under_inference_mode_and_after_it():
    with torch.inference_mode():
        inside = torch.randn(8, 8)
        assert cpu_extremes(inside, 64) == _plain(inside)
    assert cpu_extremes(inside, 64) == _plain(inside)  # an inference tensor read outside the mode
    outside = torch.randn(8, 8)
    with torch.inference_mode():
        assert cpu_extremes(outside, 64) == _plain(outside)


def test_threads_read_their_own_buffers():
    failures = []

    def read(value):
        t = torch.full((16, 16), float(value))
        for _ in range(300):
            if cpu_extremes(t, 256) != (value, value):
                failures.append(value)
                return

    threads = [threading.Thread(target=read, args=(v,)) for v in (1, 2, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
