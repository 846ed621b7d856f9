"""The forward trace on real models: calls, shapes, nesting, roots, failures, odd outputs."""

from __future__ import annotations

import threading

import pytest
import torch
from torch import nn

from support.collect import calls_by, snap, tiny_cnn, train_steps
from torchdoctor.runtime.collect import trace as collect_trace


def test_tiny_cnn_calls_match_a_direct_computation(collector, tmp_path):
    model = tiny_cnn()
    x, _, _ = train_steps(model, steps=2)
    s = snap(tmp_path=tmp_path)
    assert s["_status"] == "ok 6 modules 6 params"
    assert [(c["path"], c["type"], c["depth"], c["occurrence"]) for c in s["calls"]] == [
        ("", "TinyCNN", 0, 1),
        ("conv1", "Conv2d", 1, 1),
        ("act", "ReLU", 1, 1),
        ("pool", "MaxPool2d", 1, 1),
        ("conv2", "Conv2d", 1, 1),
        ("act", "ReLU", 1, 2),
        ("pool", "MaxPool2d", 1, 2),
        ("fc", "Linear", 1, 1),
    ]
    with torch.no_grad():  # the shapes, by hand
        a = model.conv1(x)
        b = model.pool(model.act(a))
        c = model.conv2(b)
        d = model.pool(model.act(c))
        expected = [x, a, a, b, c, c, d, model.fc(d.flatten(1))]
    outputs = [c["outputs"][0]["shape"] for c in s["calls"]]
    assert outputs == [[8, 10]] + [list(t.shape) for t in expected[1:]]
    assert s["calls"][7]["inputs"][0]["shape"] == [8, 512]
    assert all(c["status"] == "ok" and c["parent"] == (-1 if i == 0 else 0) for i, c in enumerate(s["calls"]))
    leaf = s["calls"][1]["outputs"][0]
    assert leaf == {"shape": [8, 4, 32, 32], "dtype": "float32", "device": "cpu", "requiresGrad": True}
    assert [c["params"] for c in s["calls"]] == [5538, 112, 0, 0, 296, 0, 0, 5130]
    assert s["model"]["passNumber"] == 2 and s["model"]["passComplete"] and s["error"] is None


def test_nested_modules_have_parents_paths_and_depths(collector):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 4), nn.Tanh())

        def forward(self, x):
            return self.body(x) + x

    model = nn.Sequential(Block(), Block())
    model(torch.randn(2, 4))
    s = snap()
    rows = [(c["path"], c["depth"], c["parent"], c["leaf"]) for c in s["calls"]]
    assert rows == [
        ("", 0, -1, False),
        ("0", 1, 0, False),
        ("0.body", 2, 1, False),
        ("0.body.0", 3, 2, True),
        ("0.body.1", 3, 2, True),
        ("1", 1, 0, False),
        ("1.body", 2, 5, False),
        ("1.body.0", 3, 6, True),
        ("1.body.1", 3, 6, True),
    ]
    assert calls_by(s)["0"]["params"] == 20 and calls_by(s)["0"]["ownParams"] == 0


def test_the_model_not_the_loss_module_defines_the_pass(collector):
    model = tiny_cnn()
    train_steps(model, steps=1)  # CrossEntropyLoss is a root too, called after the model
    s = snap()
    assert s["model"]["type"] == "TinyCNN"
    assert s["otherRoots"] == [{"type": "CrossEntropyLoss", "params": 0, "passNumber": 1}]
    assert snap(model.conv1)["model"]["focus"] == "conv1"  # a submodule asks for its model's pass
    assert snap(nn.Linear(2, 2))["status"] == "empty"


def test_a_failing_forward_keeps_the_trace_and_marks_the_module(collector, tmp_path):
    from models.shape_mismatch import LeNetish

    model = LeNetish()
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        model(torch.randn(8, 3, 32, 32))
    s = snap(tmp_path=tmp_path)
    assert s["_status"] == "ok 4 modules 8 params failed in fc1"
    assert [(c["path"], c["status"]) for c in s["calls"]] == [
        ("", "propagated"),
        ("conv1", "ok"),
        ("conv2", "ok"),
        ("fc1", "failed"),
    ]
    fc1 = calls_by(s)["fc1"]
    assert fc1["inputs"][0]["shape"] == [8, 576] and fc1["outputs"] is None and fc1["activation"] is None
    assert (
        s["error"]["module"] == "fc1" and s["error"]["moduleType"] == "Linear" and s["error"]["type"] == "RuntimeError"
    )
    assert "(8x576 and 400x32)" in s["error"]["message"]
    assert "nn.Linear(576" in s["error"]["explanation"]
    assert not s["model"]["passComplete"]
    model.fc1 = nn.Linear(576, 32)  # fixed: the next forward replaces the failed pass
    model(torch.randn(8, 3, 32, 32))
    s = snap()
    assert s["error"] is None and s["model"]["passNumber"] == 2 and all(c["status"] == "ok" for c in s["calls"])


def test_an_exception_caught_inside_the_forward_is_not_a_failed_pass(collector):
    class Careful(nn.Module):
        def __init__(self):
            super().__init__()
            self.strict = nn.Linear(3, 2)
            self.fallback = nn.Linear(4, 2)

        def forward(self, x):
            try:
                return self.strict(x)
            except RuntimeError:
                return self.fallback(x)

    model = Careful()
    model(torch.randn(2, 4))
    s = snap()
    assert [(c["path"], c["status"]) for c in s["calls"]] == [("", "ok"), ("strict", "failed"), ("fallback", "ok")]
    assert s["error"] is None


def test_paused_inside_a_forward_shows_running_calls(collector):
    seen = {}

    class Probe(nn.Module):
        def forward(self, x):
            seen["s"] = snap()  # what a breakpoint here would see
            return x

    model = nn.Sequential(nn.Linear(4, 4), Probe(), nn.ReLU())
    model(torch.randn(2, 4))
    s = seen["s"]
    assert [(c["path"], c["status"]) for c in s["calls"]] == [("", "running"), ("0", "ok"), ("1", "running")]
    assert not s["model"]["passComplete"] and s["error"] is None
    assert calls_by(s)["0"]["activation"]["source"] == "live"  # its output is alive: exact statistics


def test_a_root_call_that_never_returned_is_forgotten(collector):
    class Interrupted(nn.Module):
        def forward(self, x):
            raise KeyboardInterrupt  # not an Exception: torch's always-call hooks do not run

    model = nn.Sequential(nn.Linear(2, 2), Interrupted())
    with pytest.raises(KeyboardInterrupt):
        model(torch.randn(1, 2))
    model[1] = nn.Identity()
    model(torch.randn(1, 2))
    s = snap()
    assert s["model"]["passNumber"] == 2 and s["model"]["passComplete"]
    assert [c["path"] for c in s["calls"]] == ["", "0", "1"]


def test_calls_past_the_limit_are_counted(collector, monkeypatch):
    monkeypatch.setattr(collect_trace, "MAX_CALLS", 3)
    model = nn.Sequential(*[nn.Identity() for _ in range(5)])
    model(torch.randn(1))
    s = snap()
    assert len(s["calls"]) == 3 and s["model"]["callsDropped"] == 3


def test_odd_arguments_and_outputs_never_raise(collector):
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 4, batch_first=True)

        def forward(self, x, scale=1.0, mask=None):
            out, (h, c) = self.lstm(x)
            return {"out": out * scale, "h": h, "nothing": None, "n": 3}

    model = Odd()
    result = model(torch.randn(2, 5, 3), scale=2.0)
    assert set(result) == {"out", "h", "nothing", "n"}
    s = snap()
    assert calls_by(s)["lstm"]["outputs"] == [
        {"shape": [2, 5, 4], "dtype": "float32", "device": "cpu", "requiresGrad": True},
        {"shape": [1, 2, 4], "dtype": "float32", "device": "cpu", "requiresGrad": True},
        {"shape": [1, 2, 4], "dtype": "float32", "device": "cpu", "requiresGrad": True},
    ]
    root = calls_by(s)[""]
    assert [leaf.get("shape", leaf.get("type")) for leaf in root["outputs"]] == [
        [2, 5, 4],
        [1, 2, 4],
        "NoneType",
        "int",
    ]
    assert collector.errors == []

    class ReturnsNone(nn.Module):
        def forward(self, x):
            return None

    odd = ReturnsNone()
    odd(torch.randn(1))
    assert snap(odd)["calls"][0]["status"] == "ok" and collector.errors == []


def test_forwards_recomputed_by_checkpointing_are_not_passes(collector):
    from torch.utils.checkpoint import checkpoint

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.head = nn.Linear(4, 1)

        def forward(self, x):
            return self.head(checkpoint(self.inner, x, use_reentrant=False))

    model = Net()
    model(torch.randn(3, 4, requires_grad=True)).sum().backward()
    s = snap()
    assert s["model"]["type"] == "Net" and s["otherRoots"] == []
    assert [c["path"] for c in s["calls"]] == ["", "inner", "inner.0", "inner.1", "head"]


def test_a_forward_in_another_thread_is_traced(collector):
    model = nn.Linear(3, 1)
    worker = threading.Thread(target=lambda: model(torch.randn(2, 3)))
    worker.start()
    worker.join()
    assert snap()["calls"][0]["outputs"][0]["shape"] == [2, 1]


def test_uninstall_removes_the_hooks():
    from torch.nn.modules import module as M

    from torchdoctor.runtime.collect import install as collect_install

    before = (len(M._global_forward_pre_hooks), len(M._global_forward_hooks))
    collect_install.install()
    assert (len(M._global_forward_pre_hooks), len(M._global_forward_hooks)) == (before[0] + 1, before[1] + 1)
    collect_install.uninstall()
    assert (len(M._global_forward_pre_hooks), len(M._global_forward_hooks)) == before
    assert collect_install.current() is None
    assert snap()["status"] == "inactive"


def test_torch_compile_still_works(collector):
    import warnings

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that global hooks see the OptimizedModule too
        compiled = torch.compile(model, backend="eager")
        for _ in range(2):
            compiled(torch.randn(3, 4)).sum().backward()
    assert collector.errors == []
    s = snap()
    assert s["model"]["type"] == "OptimizedModule"  # the compiled graph runs without module hooks
    assert all(p["grad"]["source"] == "live" for p in s["parameters"])
