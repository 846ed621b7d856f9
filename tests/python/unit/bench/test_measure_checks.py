"""bench/measure_checks.py measures what it says on a tiny model, in process (no worker, no timing asserted).

The script itself runs every check on the whole real-model corpus (tens of minutes): not here.
"""

import importlib.util
import sys
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parents[4] / "bench" / "measure_checks.py"

TINY = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)

    def forward(self, x, targets=None):
        logits = self.fc2(torch.tanh(self.fc1(x)))
        return logits, F.cross_entropy(logits, targets)


def torchdoctor_example():
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))
    return {"model": Tiny(), "inputs": (x,), "targets": torch.tensor([0, 1, 2, 0])}
"""


def test_the_measurements_and_the_table_on_a_tiny_own_loss_model(tmp_path):
    spec = importlib.util.spec_from_file_location("measure_checks", BENCH)
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("measure_checks", bench)  # before exec: its dataclass looks its module up
    spec.loader.exec_module(bench)
    path = tmp_path / "tiny_model.py"
    path.write_text(TINY)
    threads = torch.get_num_threads()
    try:
        shapes = bench.child_shapes(str(path), "Tiny")
        assert shapes["ours_rows"] == 3 and shapes["inputs"] == "args+kwargs"  # targets= goes in as a keyword
        assert shapes["ours_out"] == "(4, 3), ()"  # the (logits, loss) tuple, both shown
        lr = bench.child_lr(str(path), "Tiny")
        assert lr["ours_diff"] == [] and lr["ours_points"] >= 10  # our sweep puts everything back
        whole = bench.child_gradcheck(str(path), "Tiny", "whole")
        assert whole["verdict"] == "PASS" and whole["what"] == "4 tensors, 83 elements", whole
        one = bench.child_gradcheck(str(path), "Tiny", "one")
        assert one["verdict"] == "PASS" and one["what"] == "20 of 48 in fc1.weight", one
    finally:
        torch.set_num_threads(threads)
    m = bench.Model("Tiny", "example", "Tiny", "tiny_model", "example_tiny")
    results = {("Tiny", c): {"verdict": "PASS", "seconds": 3.14} for c in bench.CHECKS}
    results[("Tiny", "gradcheck")] = {"verdict": "ERROR", "error": {"kind": "timeout"}, "seconds": 121.0}
    lines = bench.table_lines([m], results)
    assert lines[-1] == "| Tiny | example | PASS 3.1 | PASS 3.1 | ERROR (timeout) 121 | PASS 3.1 |"
    assert "from tiny_model import Tiny" in m.source() and "models.example_tiny()" in m.source()
