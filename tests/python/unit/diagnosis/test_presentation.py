"""What the views count, fold and say (diagnosis/presentation.py): the extension only draws these.

These were computed in extension/src/modelViewsModel.ts before (now extension/src/views/) (its tests: "flags and counts",
"a run of rows flagged by one rule writes its verdict once", "flags without a rule are never
folded", the shape trace's changes and "All tensors ... on ..."); the same cases are here.
"""

from __future__ import annotations

import glob
import json
import os

import pytest

from torchdoctor.diagnosis import diagnose
from torchdoctor.diagnosis.presentation import (
    finish_gradient_flow,
    finish_shape_trace,
    fold_repeated,
    gradient_counts,
    shape_counts,
    uniform_note,
    verdict_counts,
)

DEAD = {
    "rule": "dead-units",
    "severity": "warning",
    "sentence": "73% of the units after conv2 are zero.",
    "suggestion": "Use LeakyReLU.",
}


def vanish(name):
    return {
        "rule": "vanishing",
        "severity": "error",
        "sentence": f"{name} mean |g| under 1e-7.",
        "suggestion": "Add normalisation.",
    }


def rules_and_repeats(flag_lists):
    return [
        [(flags[d["flag"]]["rule"], d["repeats"]) for d in row]
        for flags, row in zip(flag_lists, fold_repeated(flag_lists))
    ]


def test_a_run_of_rows_flagged_by_one_rule_writes_its_flag_once():
    flags = [[] if i < 2 else [vanish(f"b{i}")] for i in range(6)]
    flags[1] = [DEAD]
    assert rules_and_repeats(flags) == [[], [("dead-units", 0)], [("vanishing", 3)], [], [], []]


def test_flags_without_a_rule_are_never_folded():
    flags = [[{**DEAD, "rule": ""}], [{**DEAD, "rule": ""}]]
    assert [len(row) for row in fold_repeated(flags)] == [1, 1]


def test_another_next_step_or_severity_is_not_the_same_flag():
    other = {**vanish("b"), "suggestion": "Lower the LR."}
    milder = {**vanish("c"), "severity": "warning"}
    assert rules_and_repeats([[vanish("a")], [other], [milder]]) == [
        [("vanishing", 0)],
        [("vanishing", 0)],
        [("vanishing", 0)],
    ]


def test_gradient_counts_count_rows_by_their_most_severe_flag():
    rows = [{"flags": []}, {"flags": [DEAD]}, {"flags": [vanish("fc.weight")]}, {"flags": []}, {"flags": []}]
    assert gradient_counts(rows) == {"rows": 5, "flagged": 2, "error": 1, "warning": 1, "info": 0}
    both = [
        {"flags": [vanish("a"), DEAD]},
        {"flags": [{**DEAD, "severity": "info"}]},
        {"flags": [{**DEAD, "sentence": " "}]},
    ]
    assert gradient_counts(both) == {"rows": 3, "flagged": 2, "error": 1, "warning": 0, "info": 1}
    assert gradient_counts([{"flags": [{**DEAD, "severity": "fatal"}]}])["warning"] == 1, "unknown reads as a warning"


def test_verdict_counts_are_the_chips_over_the_verdicts():
    verdicts = [vanish("a"), DEAD, {**DEAD, "severity": "info"}, {**DEAD, "sentence": ""}, {**DEAD, "severity": "?"}]
    assert verdict_counts(verdicts) == {"error": 1, "warning": 2, "info": 1}


def test_finish_gradient_flow_adds_counts_and_each_rows_fold():
    flags = [[] if i < 2 else [vanish(f"b{i}")] for i in range(6)]
    flags[1] = [DEAD]
    model = finish_gradient_flow(
        {"summary": "s", "rows": [{"name": f"b{i}.weight", "flags": f} for i, f in enumerate(flags)], "verdicts": []}
    )
    assert model["counts"] == {"rows": 6, "flagged": 5, "error": 4, "warning": 1, "info": 0}
    assert [r["fold"] for r in model["rows"]][:3] == [[], [{"flag": 0, "repeats": 0}], [{"flag": 0, "repeats": 3}]]
    assert model["rows"][5]["flags"] == [vanish("b5")], "the folded rows keep their own flags (icon, aria-label)"


def meta(shape, dtype="float32", device="cpu"):
    return {"shape": shape, "dtype": dtype, "device": device}


def srow(path, inputs, outputs, **extra):
    return {
        "path": path,
        "inputs": inputs,
        "outputs": outputs,
        "dtypeChange": False,
        "deviceChange": False,
        "failed": False,
        "flags": [],
        **extra,
    }


def test_shape_counts_and_no_uniform_note_when_dtypes_and_devices_change():
    rows = [
        srow("", [meta([8, 3, 32, 32])], [meta([8, 10], "float16", "cuda:0")], dtypeChange=True, deviceChange=True),
        srow("features", [meta([8, 3, 32, 32])], [meta([8, 1152])], flags=[DEAD]),
        srow("half", [meta([8, 1152])], [meta([8, 1152], "float16")], dtypeChange=True),
        srow("to", [meta([8, 1152], "torch.float16")], [meta([8, 1152], "float16", "cuda:0")], deviceChange=True),
    ]
    assert shape_counts(rows) == {"modules": 4, "changes": 3, "flagged": 1}
    assert uniform_note({"summary": "", "rows": rows, "error": None}) == ""


def test_uniform_note_is_said_once():
    rows = [srow("", [meta([8, 4])], [meta([8, 2])]), srow("fc", [meta([8, 4], "torch.float32")], [])]
    assert uniform_note({"summary": "Net: (8, 4) -> (8, 2).", "rows": rows}) == "All tensors float32 on cpu."
    said = {"summary": "Net: 2 calls; all tensors float32 on cpu.", "rows": rows, "error": None}
    assert uniform_note(said) == "", "the summary already says it"
    failed = {**said, "error": "RuntimeError: mat1 and mat2 shapes cannot be multiplied"}
    assert uniform_note(failed) == "All tensors float32 on cpu.", "the summary is hidden under a failure: said here"
    assert uniform_note({"summary": "", "rows": []}) == ""


def test_finish_shape_trace_adds_counts_and_uniform():
    model = finish_shape_trace({"summary": "", "rows": [srow("", [meta([2])], [meta([2])])], "error": None})
    assert model["counts"] == {"modules": 1, "changes": 0, "flagged": 0}
    assert model["uniform"] == "All tensors float32 on cpu."


FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "ts", "unit", "fixtures")


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(FIXTURES, "diagnose-*.json"))), ids=os.path.basename)
def test_the_ts_fixtures_carry_what_the_backend_finishes(path):
    """The TS tests draw stored diagnoseSnapshot answers: they must hold today's fields."""
    stored = json.load(open(path))
    for key, finish in (("gradientFlow", finish_gradient_flow), ("shapeTrace", finish_shape_trace)):
        model = stored.get(key)
        if model:
            assert finish(json.loads(json.dumps(model))) == model, f"{key}: rerun fixtures/diagnose_fixtures.py"
            assert model["summary"].strip(), "the backend always says a summary sentence"


def test_row_flags_and_verdicts_come_most_severe_first():
    from support.diagnosis import mlp, stats

    bad = stats(mean=None, std=None, low=None, high=None, nan=5, posinf=0)
    dead = stats(mean=0.0, std=0.0, zeros=1.0, low=0.0, high=0.0, dead_units=1.0, units=32)
    flow = diagnose(mlp(out=bad, relu2=dead, grads={"out.weight": {"nan": 5, "mean_abs": None, "norm": None}}))[
        "gradientFlow"
    ]
    rank = {"error": 0, "warning": 1, "info": 2}
    assert [rank[v["severity"]] for v in flow["verdicts"]] == sorted(rank[v["severity"]] for v in flow["verdicts"])
    for row in flow["rows"]:
        assert [rank[f["severity"]] for f in row["flags"]] == sorted(rank[f["severity"]] for f in row["flags"])
        assert all(0 <= d["flag"] < len(row["flags"]) for d in row["fold"])
    assert sum(flow["counts"][s] for s in rank) == flow["counts"]["flagged"]
