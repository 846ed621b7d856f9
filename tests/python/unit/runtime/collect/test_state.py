"""The collection changes nothing: training results, RNG, autograd graphs, versions, lifetimes."""

from __future__ import annotations

import gc
import random
import weakref

import numpy as np
import pytest
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from support.collect import snap, tiny_cnn, train_steps
from torchdoctor.runtime.collect import install as collect_install
from torchdoctor.runtime.collect import snapshot


def _rng():
    return random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state().clone()


def _same_rng(a, b):
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and torch.equal(a[2], b[2])


def _train(with_collection: bool):
    if with_collection:
        collect_install.install(1.0)
    try:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            if with_collection:
                snapshot.build()  # a pause after every backward
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().clone() for p in model.parameters()], torch.get_rng_state()
    finally:
        collect_install.uninstall()


def test_training_is_bit_identical_with_the_collection():
    off, on = _train(False), _train(True)
    assert off[0] == on[0]
    assert all(torch.equal(a, b) for a, b in zip(off[1], on[1]))
    assert torch.equal(off[2], on[2])  # dropout drew the same numbers: we drew none


def test_no_random_numbers_are_drawn(collector):
    model = tiny_cnn()
    before = _rng()
    train_steps(model, steps=2)
    mid = _rng()
    snap()
    _same_rng(mid, _rng())
    del before


def test_graphs_versions_and_flags_are_untouched(collector):
    model = tiny_cnn()
    x = torch.randn(4, 3, 32, 32)
    out = model(x)
    grad_fn, leaves = type(out.grad_fn), [type(f) for f, _ in out.grad_fn.next_functions if f is not None]
    versions = [p._version for p in model.parameters()] + [x._version, out._version]
    flags = [p.requires_grad for p in model.parameters()] + [x.requires_grad]
    snap()
    snap()
    assert type(out.grad_fn) is grad_fn and [type(f) for f, _ in out.grad_fn.next_functions if f is not None] == leaves
    assert [p._version for p in model.parameters()] + [x._version, out._version] == versions
    assert [p.requires_grad for p in model.parameters()] + [x.requires_grad] == flags
    out.sum().backward()
    grads = [p.grad._version for p in model.parameters()]
    snap()
    assert [p.grad._version for p in model.parameters()] == grads
    assert x.grad is None


class _RecordGraph(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.graph_results = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for o in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(o, torch.Tensor) and o.requires_grad:
                self.graph_results.append(getattr(func, "__name__", str(func)))
        return out


def test_no_tensor_the_collection_makes_joins_a_graph(collector):
    model = tiny_cnn()
    train_steps(model, steps=1)
    with _RecordGraph() as mode:
        snap()
    assert mode.graph_results == []
    x = torch.randn(2, 3, 32, 32, requires_grad=True)
    recorder = _RecordGraph()
    collector.tracer.budget.credit = 1.0  # the next pass is reduced on the hot path
    hooks_made = []
    original = collector.tracer._close

    def watching(*args):
        with recorder:
            original(*args)
        hooks_made.append(1)

    collector.tracer._close = watching
    model(x)
    assert hooks_made and recorder.graph_results == []


def test_nothing_of_the_program_is_kept_alive(collector):
    model = tiny_cnn()
    x = torch.randn(4, 3, 32, 32)
    out = model(x)
    refs = [weakref.ref(model), weakref.ref(out), weakref.ref(x)]
    snap()
    del model, out, x
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert snap()["status"] == "empty"


def test_hooks_never_raise_into_the_program(collector, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("internal error")

    monkeypatch.setattr(collector.tracer, "_start", boom)
    model = nn.Linear(2, 2)
    assert model(torch.ones(1, 2)).shape == (1, 2)
    assert collector.errors and "internal error" in collector.errors[0]


def test_dump_never_raises(tmp_path, collector, monkeypatch):
    model = tiny_cnn()
    train_steps(model, steps=1)
    assert snapshot.dump(str(tmp_path / "missing" / "dir" / "s.json")).startswith("error: cannot write")
    monkeypatch.setattr(snapshot, "_describe", lambda *a: 1 / 0)
    status = snapshot.dump(str(tmp_path / "s.json"))
    assert status.startswith("error: the snapshot failed: ZeroDivisionError")
    assert (tmp_path / "s.json").exists()


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_inference_passes_are_traced(collector, mode):
    model = tiny_cnn()
    context = torch.no_grad() if mode == "no_grad" else torch.inference_mode()
    with context:
        out = model(torch.randn(2, 3, 32, 32))
    s = snap()
    assert s["model"]["gradEnabled"] is False and s["model"]["passComplete"]
    assert s["calls"][0]["activation"]["count"] == out.numel()
