"""What a check needs of the model: backward failures explained by their real cause."""

from __future__ import annotations

from pathlib import Path

from support.checks import CARRIED_STATE_MODEL, example, new_result, quiet, write
from torchdoctor.checks import overfit
from torchdoctor.checks.preconditions import explain_backward_error


def test_a_graph_freed_by_an_earlier_step_is_not_called_a_cut_graph(tmp_path: Path):
    # an RNN that keeps its hidden state on the module between calls, without detaching it
    path = write(
        tmp_path,
        "carry.py",
        CARRIED_STATE_MODEL,
    )
    r = overfit.run(example(path, "Carry"), {"steps": 20}, quiet, new_result("overfit"))
    text = " ".join(r["sentences"])
    assert r["verdict"] == "FAIL"
    assert "a second time" in text and "detach the carried state" in text.lower()
    assert "graph is cut" not in text


def test_each_backward_failure_gets_its_own_cause():
    second = explain_backward_error("Trying to backward through the graph a second time (or directly access ...)")
    inplace = explain_backward_error(
        "one of the variables needed for gradient computation has been modified by an inplace operation"
    )
    cut = explain_backward_error("element 0 of tensors does not require grad and does not have a grad_fn")
    assert "reused across steps" in second and "graph is cut" not in second
    assert "in place" in inplace and "graph is cut" not in inplace
    assert "graph is cut" in cut
