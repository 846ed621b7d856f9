"""Through a real debugpy: the snapshot a paused program writes matches its model.

Each debuggee is a sample script run with the runtime injected exactly as the extension does it
(``pybackend`` first on PYTHONPATH, ``TORCHDOCTOR_RUNTIME=1``). When it pauses, the test does
what the extension does: evaluate ``dump(<file>)`` in the paused frame, read the file, and hand
it to the backend's diagnosis (here called directly; the LSP layer has its own tests).
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from support.dap_client import DAPClient
from support.dap_env import SAMPLES, injected_env, marked_line
from torchdoctor.diagnosis import diagnose

pytestmark = pytest.mark.timeout(900)  # a ceiling for a loaded machine, not an expectation

MARK = "# Set a breakpoint here (after backward)"


def _env() -> dict:
    env = injected_env()
    env["TORCHDOCTOR_RUNTIME"] = "1"
    return env


def _dump(dap: DAPClient, frame_id: int, path) -> tuple:
    """Evaluate the extension's expression; (status string, the JSON written)."""
    expression = f"__import__('torchdoctor.runtime.snapshot', fromlist=['_']).dump({json.dumps(str(path))})"
    status = ast.literal_eval(dap.evaluate(expression, frame_id, "repl")["result"])
    return status, json.loads(path.read_text())


def _value(dap: DAPClient, frame_id: int, expression: str):
    return ast.literal_eval(dap.evaluate(expression, frame_id, "repl")["result"])


def test_after_backward_the_snapshot_matches_the_model(tmp_path):
    program = SAMPLES / "views_demo.py"
    with DAPClient() as dap:
        stop = dap.launch_and_stop(str(program), [marked_line(program, MARK)], env=_env())
        status, snap = _dump(dap, stop.frame_id, tmp_path / "first.json")
        assert status == "ok 6 modules 6 params"
        assert snap["model"]["type"] == "TinyCNN" and snap["model"]["passNumber"] == 1
        assert [(c["path"], c["outputs"][0]["shape"]) for c in snap["calls"]] == [
            ("", [16, 10]),
            ("conv1", [16, 4, 32, 32]),
            ("act", [16, 4, 32, 32]),
            ("pool", [16, 4, 16, 16]),
            ("conv2", [16, 8, 16, 16]),
            ("act", [16, 8, 16, 16]),
            ("pool", [16, 8, 8, 8]),
            ("fc", [16, 10]),
        ]
        assert snap["calls"][0]["inputs"][0] == {
            "shape": [16, 3, 32, 32],
            "dtype": "float32",
            "device": "cpu",
            "requiresGrad": False,
        }
        assert snap["calls"][1]["location"]["file"].endswith("models/cnn.py")
        # The gradients are the model's, exactly.
        names = _value(dap, stop.frame_id, "[n for n, _ in model.named_parameters()]")
        assert [p["name"] for p in snap["parameters"]] == names
        for p in snap["parameters"]:
            expected = _value(
                dap, stop.frame_id, f"float(model.get_parameter('{p['name']}').grad.abs().double().mean())"
            )
            assert p["grad"]["source"] == "live" and p["grad"]["meanAbs"] == pytest.approx(expected, rel=1e-9)
            norm = _value(dap, stop.frame_id, f"float(model.get_parameter('{p['name']}').grad.double().norm())")
            assert p["grad"]["norm"] == pytest.approx(norm, rel=1e-9)
        assert snap["input"]["mean"] == pytest.approx(
            _value(dap, stop.frame_id, "float(images.double().mean())"), abs=1e-6
        )
        result = diagnose(snap)
        assert result["status"] == "ok" and result["gradientFlow"]["verdicts"] == []
        assert len(result["gradientFlow"]["rows"]) == 6 and len(result["shapeTrace"]["rows"]) == 8
        # The next stop sees the next step.
        stop = dap.stopped_after(lambda: dap.continue_(stop.thread_id))
        status, snap = _dump(dap, stop.frame_id, tmp_path / "second.json")
        assert snap["model"]["passNumber"] == 2 and snap["gradients"]["latestPass"]


def test_dead_relu_sample_flags_the_dead_layer(tmp_path):
    program = SAMPLES / "broken" / "dead_relu_views.py"
    with DAPClient() as dap:
        stop = dap.launch_and_stop(str(program), [marked_line(program, MARK)], env=_env())
        status, snap = _dump(dap, stop.frame_id, tmp_path / "dead.json")
        assert status == "ok 6 modules 6 params"
        flow = diagnose(snap)["gradientFlow"]
        dead = [v for v in flow["verdicts"] if v["rule"] == "dead-units"]
        assert [v["module"] for v in dead] == ["act2"]
        rows = {r["name"]: {f["rule"] for f in r["flags"]} for r in flow["rows"]}
        assert rows["fc2.weight"] == {"grad-vanishing", "dead-units"} and "grad-vanishing" in rows["fc1.weight"]


def test_a_shape_error_stops_with_the_failing_module_marked(tmp_path):
    program = SAMPLES / "broken" / "shape_error_views.py"
    with DAPClient() as dap:
        dap.launch(str(program), env=_env(), exception_filters=["uncaught"])
        stop = dap.wait_stopped()
        assert stop.reason == "exception"
        status, snap = _dump(dap, stop.frame_id, tmp_path / "shape.json")
        assert status == "ok 4 modules 8 params failed in fc1"
        trace = diagnose(snap)["shapeTrace"]
        assert trace["failedModule"] == "fc1" and [r["path"] for r in trace["rows"] if r["failed"]] == ["fc1"]
        assert re.match(
            r"RuntimeError: (addmm: )?mat1 and mat2 shapes cannot be multiplied \(8x576 and 400x32\)", trace["error"]
        )  # torch 2.15 names addmm
        assert next(r for r in trace["rows"] if r["path"] == "fc1")["location"]["file"].endswith("shape_mismatch.py")


def test_without_the_runtime_marker_nothing_is_collected(tmp_path):
    program = SAMPLES / "views_demo.py"
    with DAPClient() as dap:
        stop = dap.launch_and_stop(str(program), [marked_line(program, MARK)], env=injected_env())
        status, snap = _dump(dap, stop.frame_id, tmp_path / "none.json")
        assert status.startswith("inactive:") and snap["status"] == "inactive"
