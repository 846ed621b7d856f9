"""The two view models from hand-made snapshots: rows, flags, verdicts, summaries, robustness."""

from __future__ import annotations

import json

import pytest

from support.diagnosis import call, mlp, param, snapshot, stats
from torchdoctor.diagnosis import Thresholds, diagnose

DEAD = stats(mean=0.0, std=0.0, zeros=1.0, low=0.0, high=0.0, dead_units=1.0, units=32)


def test_healthy_mlp_has_rows_in_model_order_and_no_verdict():
    result = diagnose(mlp())
    flow = result["gradientFlow"]
    assert result["status"] == "ok"
    assert [r["name"] for r in flow["rows"]] == [
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
        "out.weight",
        "out.bias",
    ]
    assert flow["verdicts"] == [] and all(r["flags"] == [] for r in flow["rows"])
    assert flow["summary"].startswith("MLP after backward 3: no gradient problems in 6 parameters")
    row = flow["rows"][0]
    assert row == {
        **row,
        "module": "fc1",
        "type": "Linear",
        "meanAbs": 1e-3,
        "maxAbs": 1e-2,
        "norm": 0.1,
        "nan": 0,
        "inf": 0,
        "location": {"file": "/ws/model.py", "line": 10},
        "source": "live",
        "changed": False,
    }
    assert [a["path"] for a in flow["activations"]] == ["fc1", "act1", "fc2", "act2", "out"]
    json.dumps(result, allow_nan=False)


def test_dead_relu_is_a_verdict_and_flags_the_layers_it_starves():
    snap = mlp(
        relu2=DEAD,
        grads={
            n: {"mean_abs": 0.0, "max_abs": 0.0, "norm": 0.0}
            for n in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "out.weight")
        },
    )
    flow = diagnose(snap)["gradientFlow"]
    rules = [(v["rule"], v["module"]) for v in flow["verdicts"]]
    assert ("dead-units", "act2") in rules
    assert flow["summary"].startswith("MLP after backward 3: 2 problems. `act2` (ReLU): 100% of its 32 units")
    by_name = {r["name"]: {f["rule"] for f in r["flags"]} for r in flow["rows"]}
    assert by_name["fc2.weight"] == {"grad-vanishing", "dead-units"}  # feeds the dead ReLU
    assert by_name["fc1.weight"] == {"grad-vanishing"} and by_name["out.bias"] == set()
    vanishing = next(v for v in flow["verdicts"] if v["rule"] == "grad-vanishing")
    assert vanishing["sentence"].startswith("5 parameters in 3 layers (`fc1`, `fc2`, `out`)")  # grouped above 3
    assert "dead ReLU `act2` after it" in vanishing["suggestion"]
    out_flags = next(r for r in flow["rows"] if r["name"] == "out.weight")["flags"]
    assert "input comes from the dead ReLU `act2`" in out_flags[0]["suggestion"]
    trace = diagnose(snap)["shapeTrace"]
    assert [f["rule"] for f in next(r for r in trace["rows"] if r["path"] == "act2")["flags"]] == ["dead-units"]


def test_exploding_gradients_get_a_clip_value_from_the_healthy_norms():
    snap = mlp(grads={"out.weight": {"mean_abs": 250.0, "max_abs": 900.0, "norm": 3000.0}})
    flow = diagnose(snap)["gradientFlow"]
    (verdict,) = [v for v in flow["verdicts"] if v["rule"] == "grad-exploding"]
    assert verdict["module"] == "out" and "`out.weight`: mean |g| = 250, above 100" in verdict["sentence"]
    assert "max_norm=0.2" in verdict["suggestion"]  # healthy: five norms of 0.1 -> 0.22 -> 0.2
    assert "the total gradient norm is 3000" in verdict["suggestion"]


def test_nan_comes_first_and_says_where_it_was_born():
    bad = stats(mean=None, std=None, low=None, high=None, nan=5, posinf=0)
    snap = mlp(out=bad, grads={"out.weight": {"nan": 5, "mean_abs": None, "norm": None}})
    flow = diagnose(snap)["gradientFlow"]
    assert [v["severity"] for v in flow["verdicts"]][:2] == ["error", "error"]
    born = next(v for v in flow["verdicts"] if v["rule"] == "activation-nonfinite")
    assert born["module"] == "out" and "NaN/Inf first appear in the output of `out` (Linear): 5 NaN" in born["sentence"]
    assert "(2 NaN/Inf)" in flow["summary"]
    assert next(r for r in flow["rows"] if r["name"] == "out.weight")["nan"] == 5


def test_bad_input_batch_is_blamed_on_the_data():
    snap = mlp(out=stats(nan=3, mean=None))
    snap["input"] = stats(nan=3, mean=None)
    flow = diagnose(snap)["gradientFlow"]
    assert any(v["rule"] == "input-nonfinite" and "holds 3 NaN" in v["sentence"] for v in flow["verdicts"])
    born = next(v for v in flow["verdicts"] if v["rule"] == "activation-nonfinite")
    assert "input batch already holds NaN/Inf" in born["suggestion"]


def test_ratio_verdict_and_custom_thresholds():
    grads = {
        "fc1.weight": {"mean_abs": 1e-6},
        "fc1.bias": {"mean_abs": 1e-6},
        "out.weight": {"mean_abs": 1e-3},
        "out.bias": {"mean_abs": 1e-3},
    }
    flow = diagnose(mlp(grads=grads))["gradientFlow"]
    ratio = next(v for v in flow["verdicts"] if v["rule"] == "grad-ratio")
    assert ratio["module"] == "fc1" and "shrink 1000x" in ratio["sentence"]
    assert {f["rule"] for f in flow["rows"][0]["flags"]} == {"grad-ratio"}
    relaxed = diagnose(mlp(grads=grads), Thresholds(gradient_ratio=5000.0))["gradientFlow"]
    assert not [v for v in relaxed["verdicts"] if v["rule"] == "grad-ratio"]
    assert relaxed["thresholds"]["gradientRatio"] == 5000.0


def test_missing_gradient_and_changed_gradients():
    snap = mlp(grads={"out.weight": {"grad": False}})
    flow = diagnose(snap)["gradientFlow"]
    assert [v["rule"] for v in flow["verdicts"]] == ["grad-missing"]
    zeroed = mlp(
        grads={
            n: {"mean_abs": 0.0, "max_abs": 0.0, "norm": 0.0, "changed": True}
            for n in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "out.weight", "out.bias")
        }
    )
    flow = diagnose(zeroed)["gradientFlow"]
    assert [v["rule"] for v in flow["verdicts"]] == ["grads-changed"]  # no vanishing verdicts on zeroed grads
    assert "were zeroed after the backward" in flow["verdicts"][0]["sentence"]


def test_no_gradients_yet_gives_no_rows_and_says_so():
    snap = mlp()
    for p in snap["parameters"]:
        p["grad"] = None
    snap["gradients"]["source"] = "none"
    flow = diagnose(snap)["gradientFlow"]
    assert (
        flow["rows"] == [] and flow["summary"] == "No gradients yet for MLP: pause after `loss.backward()` to see them."
    )
    assert not [v for v in flow["verdicts"] if v["rule"] == "grad-missing"]


def test_shape_trace_rows_changes_and_summary():
    calls = [
        call(0, "", "Net", depth=0, parent=-1, inputs=((4, 3, 8, 8),), outputs=((4, 10),), leaf=False, params=300),
        call(1, "conv", "Conv2d", inputs=((4, 3, 8, 8),), outputs=((4, 4, 8, 8),), own=112, line=5),
        call(2, "half", "Half", inputs=((4, 4, 8, 8),), outputs=((4, 4, 8, 8),), out_dtype="float16"),
        call(
            3, "move", "ToCuda", inputs=((4, 4, 8, 8),), outputs=((4, 4, 8, 8),), dtype="float16", out_device="cuda:0"
        ),
        call(4, "act", "ReLU", inputs=((4, 256),), outputs=((4, 256),), occurrence=1),
        call(5, "act", "ReLU", inputs=((4, 10),), outputs=((4, 10),), occurrence=2),
    ]
    trace = diagnose(snapshot(calls, [param("conv.weight", "conv", "Conv2d")], model_type="Net"))["shapeTrace"]
    rows = trace["rows"]
    assert [(r["path"], r["depth"], r["occurrence"]) for r in rows] == [
        ("", 0, 1),
        ("conv", 1, 1),
        ("half", 1, 1),
        ("move", 1, 1),
        ("act", 1, 1),
        ("act", 1, 2),
    ]
    assert rows[1]["inputs"] == [{"shape": [4, 3, 8, 8], "dtype": "float32", "device": "cpu"}]
    assert rows[1]["params"] == 112 and rows[1]["location"] == {"file": "/ws/model.py", "line": 5}
    assert [r["dtypeChange"] for r in rows] == [False, False, True, False, False, False]
    assert [r["deviceChange"] for r in rows] == [False, False, False, True, False, False]
    assert trace["failedModule"] is None and trace["error"] is None
    assert trace["summary"].startswith("Net: (4, 3, 8, 8) -> (4, 10) through 5 module calls, 100 parameters")
    assert "2 calls change dtype or device" in trace["summary"]


def test_shape_trace_marks_only_the_failing_module():
    calls = [
        call(0, "", "LeNetish", depth=0, parent=-1, inputs=((8, 3, 32, 32),), leaf=False, status="propagated"),
        call(1, "conv1", "Conv2d", inputs=((8, 3, 32, 32),), outputs=((8, 6, 30, 30),)),
        call(2, "fc1", "Linear", inputs=((8, 576),), status="failed", line=17),
    ]
    error = {
        "type": "RuntimeError",
        "message": "mat1 and mat2 shapes cannot be multiplied (8x576 and 400x32)",
        "module": "fc1",
        "moduleType": "Linear",
        "callIndex": 2,
        "explanation": "Use nn.Linear(576, ...).",
    }
    result = diagnose(snapshot(calls, [], error=error, model_type="LeNetish", complete=False))
    trace = result["shapeTrace"]
    assert [r["failed"] for r in trace["rows"]] == [False, False, True]
    assert trace["rows"][2]["outputs"] == [] and trace["failedModule"] == "fc1"
    assert trace["error"] == (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x576 and 400x32)\n\nUse nn.Linear(576, ...)."
    )
    assert trace["summary"] == "The forward of LeNetish raised in `fc1` (Linear). Use nn.Linear(576, ...)."


def test_paused_inside_a_forward_names_the_running_call():
    calls = [
        call(0, "", "MLP", depth=0, parent=-1, leaf=False, status="running"),
        call(1, "fc1", "Linear", outputs=((8, 32),)),
        call(2, "act1", "ReLU", status="running"),
    ]
    trace = diagnose(snapshot(calls, [], complete=False))["shapeTrace"]
    assert trace["running"] == "act1" and trace["summary"].startswith(
        "Paused inside the forward of MLP (forward 3), in `act1` (ReLU)"
    )


@pytest.mark.parametrize(
    "junk", [None, [], "text", {"schema": "other"}, {"schema": "torchdoctor.snapshot", "version": 2}]
)
def test_not_a_snapshot(junk):
    result = diagnose(junk)
    assert result["status"] == "invalid" and result["gradientFlow"] is None and result["shapeTrace"] is None
    assert result["message"]


def test_empty_snapshot_passes_its_message_on():
    snap = snapshot([], [])
    snap.update(status="empty", message="no model seen yet: ...")
    assert diagnose(snap) == {
        "status": "empty",
        "message": "no model seen yet: ...",
        "gradientFlow": None,
        "shapeTrace": None,
    }


def test_damaged_fields_degrade_instead_of_failing():
    snap = mlp()
    snap["calls"][1]["inputs"] = "oops"
    snap["calls"][2]["activation"] = {"mean": "NaN", "zeros": None}
    snap["calls"].append(42)
    snap["parameters"][0]["grad"] = {"meanAbs": "inf", "nan": "many"}
    snap["parameters"].append("not a param")
    snap["gradients"] = None
    snap["model"] = None
    result = diagnose(snap)
    assert result["status"] == "ok"
    json.dumps(result, allow_nan=False)
    assert result["shapeTrace"]["rows"][1]["inputs"] == []


def test_the_backend_side_never_imports_torch():
    import subprocess
    import sys

    code = (
        "import sys, json; from torchdoctor.diagnosis import diagnose; "
        "import torchdoctor.server.diagnosis_feature; "
        "diagnose({'schema': 'torchdoctor.snapshot', 'version': 1, 'status': 'ok', 'calls': [], 'parameters': []}); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
