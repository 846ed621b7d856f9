"""snapshot.dump: the file, its status line, where each module is defined, empty cases."""

from __future__ import annotations

import json
import sys
import textwrap

import torch

from support.collect import SAMPLES, snap, tiny_cnn, train_steps
from torchdoctor.runtime.collect import install as collect_install
from torchdoctor.runtime.collect import snapshot
from torchdoctor.runtime.collect.locations import assignment_location, class_location


def _line(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_dump_writes_the_documented_json(collector, tmp_path):
    model = tiny_cnn()
    train_steps(model, steps=1)
    path = tmp_path / "s.json"
    status = snapshot.dump(str(path))
    assert status == "ok 6 modules 6 params"
    text = path.read_text()
    data = json.loads(text)
    assert "NaN" not in text and "Infinity" not in text
    assert data["schema"] == "torchdoctor.snapshot" and data["version"] == snapshot.VERSION == 1
    assert set(data) == {
        "schema",
        "version",
        "status",
        "message",
        "createdAt",
        "pid",
        "python",
        "torch",
        "model",
        "otherRoots",
        "input",
        "calls",
        "parameters",
        "gradients",
        "error",
        "collector",
    }
    assert data["message"] == "TinyCNN: forward 1, 8 module calls"
    assert [p["name"] for p in data["parameters"]] == [n for n, _ in model.named_parameters()]
    assert data["parameters"][0]["values"]["nan"] == 0
    assert data["collector"]["budget"] == 1.0 and data["collector"]["errors"] == []


def test_locations_point_at_the_assignments(collector):
    from models.cnn import TinyCNN

    model = tiny_cnn()
    model(torch.randn(1, 3, 32, 32))
    s = snap()
    cnn = SAMPLES / "models" / "cnn.py"
    by_path = {c["path"]: c["location"] for c in s["calls"]}
    assert by_path["conv1"] == {"file": str(cnn), "line": _line(cnn, "self.conv1 ="), "kind": "assignment"}
    assert by_path["fc"]["line"] == _line(cnn, "self.fc =")
    assert by_path[""] == {"file": str(cnn), "line": _line(cnn, "class TinyCNN"), "kind": "class"}
    assert s["parameters"][0]["location"] == by_path["conv1"]
    assert s["model"]["location"] == class_location(TinyCNN)


def test_sequential_children_take_their_containers_line(collector):
    import importlib.util

    train = SAMPLES / "train.py"
    spec = importlib.util.spec_from_file_location("sample_train", train)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sample_train"] = mod  # as an imported module is (inspect finds sources through it)
    spec.loader.exec_module(mod)
    model = mod.MLP()
    model(torch.randn(2, 20))
    s = snap()
    net_line = _line(train, "self.net = nn.Sequential(")
    assert [(c["path"], c["location"]["line"]) for c in s["calls"]] == [
        ("", _line(train, "class MLP")),
        ("net", net_line),
        ("net.0", net_line),
        ("net.1", net_line),
        ("net.2", net_line),
        ("net.3", net_line),
        ("net.4", net_line),
    ]


def test_assignment_styles(tmp_path):
    source = textwrap.dedent("""
        import torch.nn as nn

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.shared = nn.Linear(2, 2)

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.fc1, self.act1 = nn.Linear(2, 2), nn.ReLU()
                self.head: nn.Module = nn.Linear(2, 1)
                self.add_module("extra", nn.Identity())
                self.body = nn.Sequential(nn.Linear(2, 2))
                if self.head == None:  # a comparison, not an assignment
                    pass
    """)
    path = tmp_path / "styles_model.py"
    path.write_text(source)
    import importlib.util

    spec = importlib.util.spec_from_file_location("styles_model", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["styles_model"] = mod
    spec.loader.exec_module(mod)
    lines = source.splitlines()

    def line_of(text):
        return next(i for i, line in enumerate(lines, 1) if text in line)

    for attr, text in (
        ("fc1", "self.fc1, self.act1"),
        ("act1", "self.fc1, self.act1"),
        ("head", "self.head:"),
        ("extra", "add_module"),
        ("shared", "self.shared ="),
        ("body", "self.body ="),
    ):
        found = assignment_location(mod.Net, attr)
        assert found == {"file": str(path), "line": line_of(text), "kind": "assignment"}, attr
    assert assignment_location(mod.Net, "missing") is None
    collect_install.install(1.0)
    try:
        net = mod.Net()
        net.body(torch.randn(1, 2))  # a part of the model run on its own: named from the model
        s = snap(net)
        assert [c["path"] for c in s["calls"]] == ["body", "body.0"]
        assert s["calls"][1]["location"]["line"] == line_of("self.body =")
        assert s["model"]["type"] == "Net" and len(s["parameters"]) == 8
    finally:
        collect_install.uninstall()


def test_inactive_and_empty(tmp_path):
    assert snapshot.dump(str(tmp_path / "a.json")).startswith("inactive: the collection is not running")
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["status"] == "inactive" and data["calls"] == [] and data["model"] is None
    collect_install.install(1.0)
    try:
        assert snapshot.dump(str(tmp_path / "b.json")).startswith("empty: no model seen yet")
    finally:
        collect_install.uninstall()
