"""``torchdoctor run --nproc-per-node 2`` on real torchrun + gloo (CPU): the first rank named,
every rank stopped, no hang; the cross-rank checks on their samples; a healthy job stays silent.

Each job starts three interpreters that import torch (the launcher and two ranks), so the
module runs each sample once and the tests read the same outcome.
"""

from __future__ import annotations

import json
import re

import pytest

from support.anomaly import run_cli

NAN_ON_RANK1 = "distributed/ddp_nan_on_rank1.py"
HEALTHY = "distributed/ddp_train.py"
# A hang guard, not a speed claim: a rank left waiting in a collective would sit there for
# gloo's 30-minute default timeout.
NO_HANG_S = 240


@pytest.fixture(scope="module")
def nan_job(tmp_path_factory):
    report = tmp_path_factory.mktemp("ddp") / "reports.json"
    done = run_cli("run", "--json", str(report), "--nproc-per-node", "2", NAN_ON_RANK1, timeout=NO_HANG_S)
    return done, json.loads(report.read_text())["anomalies"]


def test_the_rank_that_went_wrong_is_named_first(nan_job) -> None:
    done, _ = nan_job
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    anomaly = [line for line in lines if "[torchdoctor] anomaly:" in line]
    assert anomaly and all(line.startswith("[rank1]: ") for line in anomaly), done.stderr
    assert "at step 5" in anomaly[0] and "model.module.0" in anomaly[0]
    assert lines[-1].startswith("torchdoctor run: rank 1 of 2 went wrong first: NaN"), done.stderr


def test_the_other_rank_says_it_followed_instead_of_a_collective_traceback(nan_job) -> None:
    done, _ = nan_job
    followed = [line for line in done.stderr.splitlines() if line.startswith("[rank0]: [torchdoctor] stopped")]
    # rank 0 either fails in its collective (then says so) or is stopped by torchrun first.
    assert all("rank 1 went wrong first (step 5)" in line for line in followed), done.stderr
    assert "ChildFailedError" not in done.stderr and "GLHF" not in done.stderr
    assert "[torchdoctor] anomaly:" not in "\n".join(
        line for line in done.stderr.splitlines() if line.startswith("[rank0]")
    )


def test_reports_carry_the_rank_and_the_step(nan_job) -> None:
    _, reports = nan_job
    assert reports, "no report in --json"
    assert {r["rank"] for r in reports} == {1}
    assert reports[0]["step"] == 5 and reports[0]["kind"] == "nonfinite_output"


def test_a_healthy_job_is_silent() -> None:
    done = run_cli("run", "--nproc-per-node", "2", HEALTHY, timeout=NO_HANG_S)
    assert done.returncode == 0, done.stderr
    assert "[torchdoctor]" not in done.stderr and "torchdoctor run:" not in done.stderr
    # Two processes share one stdout: their lines may run together, so look for each rank's.
    assert sorted(re.findall(r"rank (\d): final loss", done.stdout)) == ["0", "1"], done.stdout


@pytest.mark.parametrize(
    "sample, kind, phrase",
    [
        ("distributed/ddp_no_sampler.py", "same_batches_on_every_rank", "every rank trains on the same batches"),
        ("distributed/ddp_no_set_epoch.py", "sampler_without_set_epoch", "`set_epoch` is never called"),
        ("distributed/ddp_diverged.py", "replicas_diverged", "rank 1's parameters differ from rank 0's"),
    ],
)
def test_a_silent_distributed_bug_is_reported(tmp_path, sample, kind, phrase) -> None:
    report = tmp_path / "reports.json"
    done = run_cli("run", "--json", str(report), "--nproc-per-node", "2", sample, timeout=NO_HANG_S)
    assert done.returncode == 1, done.stderr
    assert "[torchdoctor] distributed: " in done.stderr and phrase in done.stderr, done.stderr
    assert [r["kind"] for r in json.loads(report.read_text())["anomalies"]] == [kind]
