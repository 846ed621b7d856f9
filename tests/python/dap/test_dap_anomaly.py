"""Through a real debugpy: the anomaly watch pauses each broken sample at the right line with the
right sentence; the healthy script runs to its end; anomaly breakpoint conditions work in pydevd.

Each debuggee gets what the extension gives it: ``pybackend`` first on PYTHONPATH,
``TORCHDOCTOR_RUNTIME=1`` and the session's settings in ``TORCHDOCTOR_ANOMALY``. Sessions run a few at a time (each is mostly a
torch import), then every test reads what its session saw.
"""

from __future__ import annotations

import ast
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from support.broken_cases import BROKEN, CASES, Case  # shared with the CLI tests
from support.dap_client import DAPClient
from support.dap_env import SAMPLES, injected_env, marked_line

# Ceilings, not expectations: a module-scoped fixture drives 9 real debug sessions (3 at a time),
# each importing torch; on a busy 2-core box one session alone can take 45 s to reach its stop.
pytestmark = pytest.mark.timeout(1200)

LINE_PREFIX = "[torchdoctor] anomaly: "
REPORT = "__import__('torchdoctor.runtime.anomaly.watch', fromlist=['_']).last_report()"
CONDITIONS = "__import__('torchdoctor.runtime.conditions', fromlist=['_'])."


def debuggee_env(anomaly: Optional[Dict[str, Any]]) -> Dict[str, str]:
    env = injected_env()
    env["TORCHDOCTOR_RUNTIME"] = "1"  # as the extension sets it: the views' collection runs beside the watch
    env["OMP_NUM_THREADS"] = "1"  # two shared cores: torch's thread pool would only contend
    if anomaly is not None:
        env["TORCHDOCTOR_ANOMALY"] = json.dumps(anomaly)
    return env


def watched_session(program: Path, just_my_code: bool = True) -> Dict[str, Any]:
    """Launch with the watch on (break); at the first stop, record what VS Code would get."""
    seen: Dict[str, Any] = {}
    with DAPClient() as dap:
        dap.launch(str(program), env=debuggee_env({"mode": "break"}), just_my_code=just_my_code)
        stop = dap.wait_stopped(timeout=400)
        seen["stopped"] = [e["body"] for e in dap.events if e.get("event") == "stopped"][-1]
        seen["frames"] = [(f["name"], f.get("source", {}).get("path"), f["line"]) for f in stop.frames]
        seen["output_at_stop"] = "".join(dap.output)
        seen["exception"] = dap.exception_info(stop.thread_id)
        text = dap.evaluate(f"__import__('json').dumps({REPORT})", stop.frame_id)["result"]
        seen["report"] = json.loads(ast.literal_eval(text))  # the repl shows the string's repr
        seen["locals"] = sorted(dap.frame_locals(stop.frame_id))
        dap.continue_(stop.thread_id)
        seen["exit_code"] = dap.wait_exited(timeout=400)
        seen["stops"] = sum(1 for e in dap.events if e.get("event") == "stopped")
        seen["output"] = "".join(dap.output)
    return seen


def healthy_session() -> Dict[str, Any]:
    with DAPClient() as dap:
        dap.launch(str(SAMPLES / "train.py"), env=debuggee_env({"mode": "break"}))
        code = dap.wait_exited(timeout=400)
        return {
            "exit_code": code,
            "stops": sum(1 for e in dap.events if e.get("event") == "stopped"),
            "output": "".join(dap.output),
        }


def condition_session(program: Path, conditions: Dict[int, str], expressions: Dict[str, str]) -> Dict[int, Any]:
    """No watch: conditional breakpoints; at the first stop on each line, the values of ``expressions``."""
    firsts: Dict[int, Any] = {}
    with DAPClient() as dap:
        dap.initialize()
        seq = dap.send_request(
            "launch",
            {
                "name": "t",
                "type": "debugpy",
                "request": "launch",
                "program": str(program),
                "console": "internalConsole",
                "justMyCode": True,
                "python": dap.python,
                "env": debuggee_env(None),
                "cwd": str(program.parent),
            },
        )
        dap.wait_event("initialized")
        points = dap.set_breakpoints(str(program), sorted(conditions), conditions=conditions)
        dap.request("configurationDone")
        dap.wait_response(seq)
        stop = dap.wait_stopped(timeout=400)
        while True:
            line = stop.frames[0]["line"]
            if line not in firsts:
                firsts[line] = {name: dap.evaluate(expr, stop.frame_id)["result"] for name, expr in expressions.items()}
                firsts[line]["path"] = stop.frames[0]["source"]["path"]
            if len(firsts) == len(conditions):
                break
            # stopped_after calls the lambda before `stop` is rebound: not a late-binding bug.
            stop = dap.stopped_after(lambda: dap.continue_(stop.thread_id), timeout=400)  # noqa: B023
        firsts[0] = [p.get("verified") for p in points]
    return firsts


@pytest.fixture(scope="module")
def sessions():
    lr, nan_input = BROKEN / "lr_too_high.py", BROKEN / "nan_in_input.py"
    jobs = {name: (watched_session, (BROKEN / name,)) for name in CASES}
    jobs["healthy"] = (healthy_session, ())
    jobs["zero_std_norm.py, justMyCode false"] = (watched_session, (BROKEN / "zero_std_norm.py", False))
    jobs["any_nonfinite"] = (
        condition_session,
        (nan_input, {Case.line("nan_in_input.py"): CONDITIONS + "any_nonfinite()"}, {"nan": "int(x.isnan().sum())"}),
    )
    jobs["lr conditions"] = (
        condition_session,
        (
            lr,
            {
                marked_line(lr, "loss = nn.functional.mse_loss"): CONDITIONS + "exceeds(prediction, 20)",
                Case.line("lr_too_high.py"): CONDITIONS + "loss_spiked(loss, 10)",
                marked_line(lr, "optimizer.step()"): CONDITIONS + "grad_norm_exceeds(model, 1000)",
            },
            {"step": "step"},
        ),
    )
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(fn, *args) for name, (fn, args) in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_broken_sample_pauses_at_the_right_line_with_the_sentence(sessions, name):
    case, seen = CASES[name], sessions[name]
    stopped, report = seen["stopped"], seen["report"]
    assert stopped["reason"] == "exception" and stopped["text"] == "TorchDoctorAnomaly"
    case.check(stopped["description"])
    assert stopped["description"] == report["sentence"]
    assert seen["frames"][0][1:] == (str(case.path(name)), Case.line(name))  # the user's line, on top
    assert all(path.startswith(str(BROKEN)) for _, path, _ in seen["frames"])  # no torch, no hook frames
    assert seen["exception"]["exceptionId"] == "TorchDoctorAnomaly"
    assert seen["exception"]["description"] == stopped["description"]
    assert LINE_PREFIX + stopped["description"] + "\n" in seen["output_at_stop"]  # sent just before the stop
    assert report["kind"] == case.kind and report["step"] == case.step
    assert report["where"] == f"{case.path(name)}:{Case.line(name)}"
    assert seen["exit_code"] == 0 and seen["stops"] == 1  # Continue: the program runs on to its end
    assert seen["output"].count(LINE_PREFIX) == 1  # firstOnly


def test_the_paused_frame_is_live(sessions):
    """Locals of the user's forward are there to inspect (the stop is inside the hook, not after)."""
    assert sessions["zero_std_norm.py"]["locals"] == ["self", "x"]
    assert "loss" in sessions["missing_zero_grad.py"]["locals"]


def test_just_my_code_false_still_puts_the_users_line_on_top(sessions):
    seen = sessions["zero_std_norm.py, justMyCode false"]
    assert seen["frames"][0][1:] == (str(BROKEN / "zero_std_norm.py"), Case.line("zero_std_norm.py"))
    assert seen["exception"]["exceptionId"] == "TorchDoctorAnomaly"  # no "(note: ... paused at ...)" suffix
    assert not any("Current frame" in name for name, _, _ in seen["frames"])


def test_the_healthy_script_runs_to_its_end(sessions):
    seen = sessions["healthy"]
    assert seen["exit_code"] == 0 and seen["stops"] == 0
    assert LINE_PREFIX not in seen["output"] and seen["output"].count("epoch") == 5


def test_condition_any_nonfinite_stops_when_the_nan_arrives(sessions):
    seen = sessions["any_nonfinite"]
    line = Case.line("nan_in_input.py")
    assert seen[0] == [True] and seen[line]["nan"] == "1" and seen[line]["path"] == str(BROKEN / "nan_in_input.py")


def test_conditions_exceeds_loss_spiked_and_grad_norm(sessions):
    """lr_too_high.py, steps 0-5: max |prediction| 0.4, 6.1, 10.2, 32.2, 98.7, 358; loss 9.7, 5.4, 4.0, 50, 263,
    6639; gradient norm 4.1, 5.7, 10, 55, 219, 5942. Each condition stops at its first true step."""
    seen, lr = sessions["lr conditions"], BROKEN / "lr_too_high.py"
    assert seen[0] == [True, True, True]
    first = {text: seen[marked_line(lr, text)]["step"] for text in ("loss = nn", "# stopped here", "optimizer.step()")}
    assert first["# stopped here"] == "5"  # loss_spiked: 6639 > 10 x median(9.7, 5.4, 4.0, 50, 263)
    assert first["loss = nn"] == "3"  # exceeds(prediction, 20)
    assert first["optimizer.step()"] == "5"  # grad_norm_exceeds(model, 1000)
