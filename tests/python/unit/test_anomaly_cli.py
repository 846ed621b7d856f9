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
    by_step: dict = {}
    for r in reports:
        by_step.setdefault(r["step"], []).append(r["kind"])
    # one report a step, but a lesser one does not hide the step's first NaN/Inf: two lines at most
    nonfinite = {"nonfinite_output", "nonfinite_grad", "loss_nan"}
    assert all(len(k) == 1 or (len(k) == 2 and k[0] not in nonfinite and k[1] in nonfinite) for k in by_step.values())
    # the step the outputs explode and a later layer's output turns NaN: both, the NaN no longer hidden
    assert ["exploding_output", "nonfinite_output"] in by_step.values()
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


NAN_THEN_EXIT = """
import sys
import torch
print("the script's own line")
layer = torch.nn.Linear(2, 2)
layer(torch.full((1, 2), float("nan"))).sum().backward()
sys.exit(3)
"""


def test_the_scripts_own_failure_status_wins_over_ours(tmp_path):
    script = tmp_path / "nan_then_exit.py"
    script.write_text(NAN_THEN_EXIT)
    logged = run_cli("run", "--anomaly", "log", str(script))
    assert logged.returncode == 3 and "[torchdoctor] anomaly: NaN" in logged.stderr
    stopped = run_cli("run", str(script))  # break mode: stopped before its sys.exit(3)
    assert stopped.returncode == 1


def test_keyboard_interrupt_is_130_with_a_line(tmp_path):
    script = tmp_path / "interrupted.py"
    script.write_text("print('working')\nraise KeyboardInterrupt\n")
    result = run_cli("run", str(script))
    assert result.returncode == 130 and "interrupted (KeyboardInterrupt)" in result.stderr


def test_a_crash_shows_the_users_frames_only(tmp_path):
    script = tmp_path / "crash_deep.py"
    script.write_text("def inner():\n    raise ValueError('deep')\n\n\ndef outer():\n    inner()\n\n\nouter()\n")
    result = run_cli("run", str(script))
    assert result.returncode == 1 and "ValueError: deep" in result.stderr
    assert f'File "{script}", line 6, in outer' in result.stderr
    for internal in ("anomaly_cli.py", "runpy", "cli.py", "<frozen"):
        assert internal not in result.stderr


def test_the_scripts_prints_come_before_the_anomaly_line_in_one_file(tmp_path):
    script = tmp_path / "nan_then_exit.py"
    script.write_text(NAN_THEN_EXIT)
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    with open(tmp_path / "both.txt", "w") as out:
        subprocess.run(
            [sys.executable, "-m", "torchdoctor", "run", str(script)], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    text = (tmp_path / "both.txt").read_text()
    assert 0 <= text.index("the script's own line") < text.index("[torchdoctor] anomaly:")


SPAWNED = """
import torch
import torch.multiprocessing as mp
from torch import nn


def train(rank, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(8, 4)
        if rank == 1 and step == 1:
            x[0, 0] = float("nan")  # planted in the second child
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = nn.Linear(4, 1)
    model.share_memory()
    mp.spawn(train, args=(model,), nprocs=2, join=True)
    print("parent done")
"""

WORKERS = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Standardise(nn.Module):
    def forward(self, x):
        return (x - x.mean()) / x.std()


class Rows(Dataset):
    def __init__(self):
        self.standardise = Standardise()

    def __len__(self):
        return 32

    def __getitem__(self, index):
        x = torch.ones(4) if index == 13 else torch.randn(4)  # planted: a constant row
        return self.standardise(x), torch.zeros(1)


if __name__ == "__main__":
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in DataLoader(Rows(), batch_size=8, num_workers=2):
        x = torch.nan_to_num(x, nan=0.0)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("parent done")
"""


@pytest.mark.timeout(900)  # two spawned interpreters import torch: slow on a loaded 2-core machine
def test_spawned_children_are_watched_and_the_parent_fails(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    result = run_cli("run", "--anomaly", "log", "--json", str(tmp_path / "r.json"), str(script), timeout=800)
    reports = json.loads((tmp_path / "r.json").read_text())["anomalies"]
    assert result.returncode == 1 and "parent done" in result.stdout
    assert reports and all(r["pid"] for r in reports) and reports[0]["kind"] == "nonfinite_output"
    assert "reported in child processes" in result.stderr


@pytest.mark.timeout(900)
def test_a_spawned_child_in_break_mode_stops_the_run_with_one_clear_line(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    result = run_cli("run", "--json", str(tmp_path / "r.json"), str(script), timeout=800)
    reports = json.loads((tmp_path / "r.json").read_text())["anomalies"]
    assert result.returncode == 1 and "parent done" not in result.stdout  # break: the run stopped
    assert reports and reports[0]["kind"] == "nonfinite_output" and reports[0]["pid"]
    assert "stopped at the anomaly reported above" in result.stderr and "ProcessExitedException" in result.stderr
    assert "Traceback" not in result.stderr  # neither torch.multiprocessing's nor ours


@pytest.mark.timeout(900)
def test_a_dataloader_worker_reports_once_with_its_id_and_sample(tmp_path):
    script = tmp_path / "workers.py"
    script.write_text(WORKERS)
    result = run_cli("run", "--json", str(tmp_path / "r.json"), str(script), timeout=800)
    [report] = json.loads((tmp_path / "r.json").read_text())["anomalies"]
    assert result.returncode == 1 and "parent done" in result.stdout  # the worker did not die
    assert report["worker_id"] in (0, 1) and report["sample_index"] == 13
    assert report["qualname"].endswith("Standardise") or report["module_type"] == "Standardise"
    assert "exited unexpectedly" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("[torchdoctor] anomaly:") == 1
