"""``torchdoctor run`` on every broken sample (caught, named, exit 1) and on the healthy one (exit 0).

Importing torch costs more than running a sample, so one driver process runs every sample
through the CLI's own entry point (``torchdoctor.cli.main``, what ``python -m torchdoctor`` calls),
one after the other, each with its own stdout/stderr; two real ``python -m torchdoctor run``
processes check the exit statuses end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from support.anomaly import PYBACKEND, SAMPLES, run_cli
from support.broken_cases import BROKEN, CASES, Case

DRIVER = textwrap.dedent("""
    import contextlib, io, json, sys
    from torchdoctor.cli import main
    results = {}
    for name, argv in json.loads(sys.argv[1]).items():
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        results[name] = [status, out.getvalue(), err.getvalue()]
    print(json.dumps(results))
""")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> (exit status, stdout, stderr, reports) for each sample, train.py and a log-mode run."""
    tmp = tmp_path_factory.mktemp("runs")
    jobs = {name: ["run", "--json", str(tmp / f"{name}.json"), str(BROKEN / name)] for name in CASES}
    jobs["train.py"] = ["run", "--json", str(tmp / "train.py.json"), str(SAMPLES / "train.py")]
    jobs["log"] = ["run", "--anomaly", "log", "--json", str(tmp / "log.json"), str(BROKEN / "lr_too_high.py")]
    jobs["options"] = [
        "run",
        "--config",
        '{"loss": {"spike": "off"}}',
        "--threshold",
        "1000",
        "--skip-steps",
        "6",
        "--json",
        str(tmp / "options.json"),
        str(BROKEN / "lr_too_high.py"),
    ]
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(jobs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=str(SAMPLES),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        name: (status, out, err, json.loads((tmp / f"{name}.json").read_text())["anomalies"])
        for name, (status, out, err) in results.items()
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_broken_sample_is_caught_and_named(runs, name):
    case = CASES[name]
    status, out, err, reports = runs[name]
    assert status == 1, err[-2000:]
    [report] = reports
    assert report["kind"] == case.kind and report["step"] == case.step
    case.check(report["sentence"])
    assert report["where"] == f"{case.path(name)}:{Case.line(name)}"
    lines = err.splitlines()
    assert lines[0] == "[torchdoctor] anomaly: " + report["sentence"]
    assert any(line.strip().startswith("stack:") and f"{name}:{Case.line(name)} in " in line for line in lines)
    assert "final loss" not in out  # stopped at the first anomaly
    assert "\x1b[" not in err


def test_the_report_shows_input_and_output_statistics(runs):
    _, _, err, _ = runs["nan_in_input.py"]
    assert "  module:   model.fc1 (Linear, in MLP)" in err
    assert "  input:    tensor[64, 10] f32 cpu 2.5 KiB ⚠ NaN×1" in err
    assert "  output:   tensor[64, 32] f32 cpu 8 KiB ⚠ NaN×32" in err


def test_the_healthy_script_runs_clean(runs):
    status, out, err, reports = runs["train.py"]
    assert status == 0 and reports == [] and "[torchdoctor]" not in err, err[-2000:]
    assert out.count("epoch") == 5


def test_log_mode_reports_every_step_and_finishes(runs):
    status, out, err, reports = runs["log"]
    assert status == 1 and "final loss nan" in out
    kinds = [r["kind"] for r in reports]
    assert kinds[0] == "loss_spike" and "nonfinite_output" in kinds
    assert len(set(r["step"] for r in reports)) == len(reports)  # one report per step
    assert err.count("[torchdoctor] anomaly: ") == len(reports)
    assert f"torchdoctor run: {len(reports)} anomalies reported" in err


def test_options_threshold_skip_steps_and_config(runs):
    """lr_too_high.py without the spike rule: outputs pass 1000 at step 6 (max |prediction| 358 at step 5)."""
    status, _, _, [report] = runs["options"]
    assert status == 1 and report["kind"] == "exploding_output" and report["step"] == 6
    assert report["threshold"] == 1000 and report["max_abs"] > 1000


def test_exit_statuses_end_to_end():
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "torchdoctor", "run", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for path in (BROKEN / "zero_std_norm.py", SAMPLES / "train.py")
    ]
    assert [p.wait(timeout=180) for p in procs] == [1, 0]


def test_exit_status_argv_and_usage(tmp_path):
    script = tmp_path / "status.py"
    script.write_text("import sys\nprint(sys.argv[1:])\nsys.exit(int(sys.argv[1]))\n")
    result = run_cli("run", str(script), "3", "--flag")
    assert result.returncode == 3 and result.stdout.strip() == "['3', '--flag']"
    assert run_cli("run", str(tmp_path / "missing.py")).returncode == 2
    crash = tmp_path / "crash.py"
    crash.write_text("raise ValueError('boom')\n")
    result = run_cli("run", str(crash))
    assert result.returncode == 1 and "ValueError: boom" in result.stderr
