"""TD007 through a running-average meter (lint/rules/loss_meters.py): the image-classification
scripts' ``AverageMeter`` whose ``update(self, val, n=1)`` does ``self.sum += val * n`` keeps
every batch's graph alive when fed the loss tensor instead of ``loss.item()``. A meter that
converts what it gets, a meter fed a number, and a meter updated under ``no_grad`` are fine; a
meter class brought by ``from utils import *`` is read in utils.py."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List, Tuple

from support.lint import hits
from torchdoctor.lint import lint_source
from torchdoctor.lint import project as P

METER = """
class RunningMean:
    def __init__(self):
        self.total, self.count = 0, 0

    def update(self, val, n=1):
        self.last = val
        self.total += {added}
        self.count += n
"""

LOOP = """
import torch
from torch import nn


def fit(net, loader, opt):
    criterion = nn.CrossEntropyLoss()
    meter = RunningMean()
    for x, y in loader:
        loss = criterion(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.update({fed}, x.size(0))
    return meter.total / meter.count
"""


def td007(added: str, fed: str, loop: str = LOOP):
    return hits(loop.format(fed=fed) + METER.format(added=added), "TD007")


def test_a_summing_meter_fed_the_loss_tensor_is_reported():
    assert td007("val * n", "loss") == [("TD007", 13)]


def test_a_summing_meter_fed_a_number_is_fine():
    assert td007("val * n", "loss.item()") == []


def test_a_meter_that_converts_what_it_gets_is_fine():
    assert td007("val.item() * n", "loss") == []


def test_a_meter_updated_under_no_grad_is_fine():
    evaluation = LOOP.replace("        opt.zero_grad()\n        loss.backward()\n        opt.step()\n", "").replace(
        "    for x, y in loader:\n        loss", "    for x, y in loader:\n      with torch.no_grad():\n        loss"
    )
    evaluation = evaluation.replace("        meter.update(", "      meter.update(")
    assert td007("val * n", "loss", evaluation) == []


def test_a_meter_class_from_a_star_import_is_read_where_it_is_defined(tmp_path: Path):
    (tmp_path / "utils.py").write_text(textwrap.dedent(METER.format(added="val * n")), encoding="utf-8")
    script = "from utils import *\n" + textwrap.dedent(LOOP.format(fed="loss"))
    (tmp_path / "train.py").write_text(script, encoding="utf-8")
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source(script, str(tmp_path / "train.py"))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    found: List[Tuple[str, int]] = [(f.rule_id, f.line) for f in result.all if f.rule_id == "TD007"]
    assert found == [("TD007", 15)]


# -- meters whose ``update`` lets go of the graph before it sums -----------------------------

TO_NUMBER = """

def as_number(v):
    return v.item() if torch.is_tensor(v) else float(v)
"""


def test_a_meter_that_sums_the_data_of_what_it_gets_is_fine():
    # ``.data`` is the same numbers without the autograd history: no graph is kept
    assert td007("val.data * n", "loss") == []


def test_a_meter_that_sums_a_detached_copy_is_fine():
    assert td007("val.detach() * n", "loss") == []


def test_a_meter_that_sums_a_numpy_copy_is_fine():
    assert td007("val.cpu().numpy() * n", "loss") == []


def test_a_meter_that_sums_a_python_float_is_fine():
    assert td007("float(val) * n", "loss") == []


def test_a_meter_that_sums_what_a_helper_of_ours_returns_is_fine():
    # ``as_number`` calls ``.item()``; whatever a call returns is not known to be the tensor
    assert td007("as_number(val) * n", "loss", LOOP + TO_NUMBER) == []


def test_a_meter_that_rebinds_what_it_gets_through_a_helper_is_fine():
    rebinding = METER.replace("        self.last = val\n", "        val = as_number(val)\n")
    assert "as_number" in rebinding
    assert hits(LOOP.format(fed="loss") + TO_NUMBER + rebinding.format(added="val * n"), "TD007") == []


def test_a_meter_that_sums_the_tensor_scaled_and_negated_still_keeps_the_graph():
    assert td007("-(val * n) / 2", "loss") == [("TD007", 13)]
