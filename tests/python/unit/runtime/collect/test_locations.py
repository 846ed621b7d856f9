"""A click opens the line that ran: a module assigned on several branches is located by its call."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

from support.collect import snap

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn

    class Attention(nn.Module):
        def __init__(self, width, cross=False):
            super().__init__()
            self.cross = cross
            if cross:
                self.c_attn = nn.Linear(width, 2 * width)
                self.q_attn = nn.Linear(width, width)
            else:
                self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)

        def forward(self, x):
            if self.cross:
                q = self.q_attn(x)
                k, v = self.c_attn(x).chunk(2, dim=-1)
            else:
                q, k, v = self.c_attn(x).chunk(3, dim=-1)  # the line that ran
            return self.c_proj(q + k + v)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = Attention(4)

        def forward(self, x):
            return self.attn(x)
""")


def _load(tmp_path):
    path = tmp_path / "branchy_model.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("branchy_model", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["branchy_model"] = mod
    spec.loader.exec_module(mod)
    return path, mod


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def test_an_attribute_assigned_on_two_branches_opens_the_call_that_ran(collector, tmp_path):
    import torch

    path, mod = _load(tmp_path)
    net = mod.Net()  # kept alive: the trace holds the model by weak reference
    net(torch.randn(2, 4))
    s = snap()
    by_path = {c["path"]: c["location"] for c in s["calls"]}
    assert by_path["attn.c_attn"] == {"file": str(path), "line": line_of("# the line that ran"), "kind": "call"}
    # One assignment: its definition, as before.
    assert by_path["attn.c_proj"] == {"file": str(path), "line": line_of("self.c_proj ="), "kind": "assignment"}
    assert by_path["attn"]["kind"] == "assignment"
    weight = next(p for p in s["parameters"] if p["name"] == "attn.c_attn.weight")
    assert weight["location"] == by_path["attn.c_attn"]  # the gradient-flow row opens the same line


def test_no_location_key_leaks_into_the_snapshot(collector, tmp_path):
    import torch

    _, mod = _load(tmp_path)
    net = mod.Net()  # kept alive: the trace holds the model by weak reference
    net(torch.randn(2, 4))
    for c in snap()["calls"]:
        assert c["location"] is None or set(c["location"]) == {"file", "line", "kind"}
