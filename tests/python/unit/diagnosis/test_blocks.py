"""Folding by block: a transformer's blocks are one group each, in both views; layers never."""

from __future__ import annotations

import torch
from torch import nn

from support.collect import snap
from torchdoctor.diagnosis.blocks import FOLD_ROWS, block_paths, gradient_groups, shape_folds
from torchdoctor.diagnosis.diagnose import diagnose
from torchdoctor.runtime.collect import install as collect_install


def call(path, type_, leaf=False, depth=1):
    return {"path": path, "type": type_, "leaf": leaf, "depth": depth}


def test_blocks_are_the_outer_stack_of_one_type():
    calls = [call("", "GPT", depth=0), call("wte", "Embedding", leaf=True)]
    for i in range(3):
        calls.append(call(f"h.{i}", "Block"))
        calls.append(call(f"h.{i}.mlp", "MLP", depth=2))
        calls += [call(f"h.{i}.mlp.layers.{j}", "Expert", depth=3) for j in range(2)]
        calls += [call(f"h.{i}.mlp.layers.{j}.fc", "Linear", leaf=True, depth=4) for j in range(2)]
    assert block_paths(calls) == ["h.0", "h.1", "h.2"]  # the experts inside a block fold with it


def test_a_sequential_of_layers_has_no_blocks():
    calls = [call("", "Sequential", depth=0)] + [
        call(f"{i}", t, leaf=True) for i, t in enumerate(["Linear", "ReLU", "Linear"])
    ]
    calls += [call("net.0", "Linear", leaf=True), call("net.1", "Linear", leaf=True)]
    assert block_paths(calls) == []


def test_mixed_types_are_not_a_stack():
    calls = [call("h.0", "Encoder"), call("h.1", "Decoder")]
    assert block_paths(calls) == []


def test_without_calls_the_parameter_names_say():
    names = [f"layers.{i}.fc.weight" for i in range(4)] + ["head.weight"]
    assert block_paths([], names) == [f"layers.{i}" for i in range(4)]


def grad_row(name, mean, numel=10, flags=()):
    return {
        "name": name,
        "module": name.rpartition(".")[0],
        "meanAbs": mean,
        "maxAbs": mean * 3,
        "norm": mean,
        "numel": numel,
        "flags": list(flags),
    }


def test_gradient_groups_fold_many_rows_and_keep_flagged_blocks_open():
    rows = [grad_row("emb.weight", 1.0)]
    for i in range(30):
        flags = [{"severity": "warning", "rule": "x"}] if i == 7 else []
        rows += [grad_row(f"h.{i}.fc.weight", 0.1, 30, flags), grad_row(f"h.{i}.fc.bias", 0.4, 10)]
    groups = gradient_groups(rows, [f"h.{i}" for i in range(30)], {"h.0": "Block"})
    assert len(rows) >= FOLD_ROWS and len(groups) == 30
    assert groups[0]["first"] == 1 and groups[0]["count"] == 2 and groups[0]["type"] == "Block"
    assert rows[0]["group"] is None and rows[1]["group"] == rows[2]["group"] == 0
    assert abs(groups[0]["meanAbs"] - (0.1 * 30 + 0.4 * 10) / 40) < 1e-12  # weighted by size
    assert groups[0]["maxAbs"] == 0.4 * 3
    assert [g["folded"] for g in groups].count(False) == 1 and groups[7]["tone"] == "warning"


def test_few_rows_are_grouped_but_open():
    rows = [grad_row(f"h.{i}.w", 0.1) for i in range(4)]
    groups = gradient_groups(rows, [f"h.{i}" for i in range(4)], {})
    assert len(groups) == 4 and not any(g["folded"] for g in groups)


def test_shape_folds_count_the_calls_inside_a_block():
    rows = [{"path": "", "depth": 0}]
    for i in range(20):
        rows += [{"path": f"h.{i}", "depth": 1}, {"path": f"h.{i}.fc", "depth": 2}, {"path": f"h.{i}.act", "depth": 2}]
    rows[5]["flags"] = [{"severity": "warning"}]  # h.1.act
    shape_folds(rows, [f"h.{i}" for i in range(20)])
    assert rows[1]["fold"] == {"rows": 2, "folded": True}
    assert rows[4]["fold"] == {"rows": 2, "folded": False}  # a flagged call is never hidden
    assert rows[0]["fold"] is None and rows[2]["fold"] is None


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        return x + self.out(self.fc(self.ln(x)))


class TinyLM(nn.Module):
    def __init__(self, blocks=12):
        super().__init__()
        self.wte = nn.Embedding(20, 8)
        self.h = nn.ModuleList([Block() for _ in range(blocks)])
        self.head = nn.Linear(8, 20, bias=False)
        self.wte.weight = self.head.weight

    def forward(self, tokens):
        x = self.wte(tokens)
        for b in self.h:
            x = b(x)
        return self.head(x)


def test_a_twelve_block_model_folds_in_both_views_and_embeddings_are_not_changes():
    collect_install.install(1.0)
    try:
        model = TinyLM()
        model(torch.randint(0, 20, (2, 5))).sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1e-3)
        views = diagnose(snap())
    finally:
        collect_install.uninstall()
    flow, trace = views["gradientFlow"], views["shapeTrace"]
    assert [g["path"] for g in flow["groups"]] == [f"h.{i}" for i in range(12)]
    assert all(g["count"] == 6 and g["folded"] for g in flow["groups"])  # 73 rows: folded
    assert [r["path"] for r in trace["rows"] if r["fold"]] == [f"h.{i}" for i in range(12)]
    assert trace["counts"]["changes"] == 0  # token ids in, floats out: what an embedding does
    assert "changes dtype" not in trace["summary"]
    assert flow["moment"]["when"] == "pause" and flow["moment"]["changed"] == len(flow["rows"])
    params = sum(p.numel() for p in model.parameters())
    assert trace["rows"][0]["params"] == params  # the tied head counted once
