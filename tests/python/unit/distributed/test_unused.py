"""Parameters of a DDP model that get no gradient, on real torchrun + gloo (CPU, 2 ranks): named
with the rank and step before DDP's "Expected to have finished reduction" error, that error
explained in one line, every rank stopped (no hang); DDP told to cope stays silent."""

from __future__ import annotations

import json
import re

import pytest

from support.anomaly import run_cli
from torchdoctor.distributed.unused import ERROR_TEXT, UnusedWatch

SAMPLE = "distributed/ddp_unused_parameters.py"
NO_HANG_S = 240  # a hang guard: a rank waiting in an all-reduce would wait gloo's 30 minutes


def job(tmp_path, *flags):
    report = tmp_path / "reports.json"
    done = run_cli("run", "--json", str(report), "--nproc-per-node", "2", SAMPLE, *flags, timeout=NO_HANG_S)
    return done, json.loads(report.read_text())["anomalies"] if report.exists() else []


def test_the_ranks_name_the_parameters_and_explain_the_ddp_error(tmp_path) -> None:
    done, reports = job(tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    # Both ranks skip the head; whichever fails first, torchrun may stop the other before its
    # next forward, so at least one rank (and any rank that got there) names the parameters.
    named = [line for line in lines if "[torchdoctor] distributed: " in line]
    assert named and len(named) <= 2, done.stderr
    for line in named:
        assert line.startswith(
            ("[rank0]: [torchdoctor] distributed: at step 0,", "[rank1]: [torchdoctor] distributed: at step 0,")
        )
        assert "2 of the DDP model's 6 parameters got no gradient: module.aux.weight, module.aux.bias" in line
    stopped = [line for line in lines if "[torchdoctor] stopped: DDP's RuntimeError" in line]
    assert stopped and all(ERROR_TEXT in line and "module.aux.weight" in line for line in stopped), done.stderr
    assert "Traceback" not in done.stderr and "ChildFailedError" not in done.stderr, done.stderr
    assert lines[-1].startswith("torchdoctor run: rank "), done.stderr
    assert reports and {(r["kind"], r["step"]) for r in reports} == {("unused_parameters", 0)}
    assert {r["rank"] for r in reports} <= {0, 1}
    assert all(r["parameters"] == ["module.aux.weight", "module.aux.bias"] for r in reports)


def test_a_branch_on_one_rank_only_names_that_rank_and_the_waiting_one_follows(tmp_path) -> None:
    done, reports = job(tmp_path, "--rank0-uses-it")
    assert done.returncode == 1, done.stderr
    assert [(r["kind"], r["rank"]) for r in reports] == [("unused_parameters", 1)]
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("torchdoctor run: rank 1 of 2 went wrong first: at step 0, 2 of the DDP model's")
    # rank 0 waited in the all-reduce: it stops when rank 1 leaves (or torchrun stops it), never with a report
    assert not [line for line in lines if line.startswith("[rank0]: [torchdoctor] distributed")], done.stderr
    assert "rank 0: done" not in done.stdout


def test_ddp_told_to_find_unused_parameters_is_silent(tmp_path) -> None:
    done, reports = job(tmp_path, "--find-unused")
    assert done.returncode == 0, done.stderr
    assert reports == [] and "[torchdoctor]" not in done.stderr
    # Two processes share one stdout: their lines may run together, so look for each rank's.
    assert sorted(re.findall(r"rank (\d): done", done.stdout)) == ["0", "1"], done.stdout


TRICKS = """
import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
backbone[0].requires_grad_(False)  # frozen before wrapping: not DDP's concern
model = nn.parallel.DistributedDataParallel(nn.Sequential(backbone, nn.Linear(16, 2)))
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
data = torch.Generator().manual_seed(rank)
for step in range(3):
    optimizer.zero_grad()
    with model.no_sync():  # gradient accumulation: the first micro-batch without all-reduce
        nn.functional.cross_entropy(model(torch.randn(8, 8, generator=data)), torch.randint(0, 2, (8,))).backward()
    nn.functional.cross_entropy(model(torch.randn(8, 8, generator=data)), torch.randint(0, 2, (8,))).backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():  # evaluation between steps
        model(torch.randn(4, 8, generator=data))
    model.train()
print(f"rank {rank}: done", flush=True)
dist.destroy_process_group()
"""


def test_frozen_layers_no_sync_accumulation_and_evaluation_are_silent(tmp_path) -> None:
    script = tmp_path / "ddp_tricks.py"
    script.write_text(TRICKS)
    done = run_cli("run", "--nproc-per-node", "2", str(script), timeout=NO_HANG_S)
    assert done.returncode == 0, done.stderr
    assert "[torchdoctor]" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    "error, explained",
    [
        (RuntimeError(ERROR_TEXT + " before starting a new one. This error indicates ..."), True),
        (RuntimeError("Connection closed by peer"), False),
        (ValueError("shapes"), False),
    ],
)
def test_only_ddps_own_error_is_explained(error, explained) -> None:
    line = UnusedWatch(lambda report: None).explain(error)
    assert (line is not None) == explained
    if explained:
        assert "some parameters got no gradient in the previous backward" in line


def test_a_second_install_redirects_the_reports_instead_of_adding_a_hook() -> None:
    # A rank armed twice (a debug session's startup, then rank_entry) must report each finding once.
    from torch.nn.modules import module as nn_module

    from torchdoctor.distributed import unused

    hooks = nn_module._global_forward_pre_hooks
    before, saved = set(hooks), list(unused._WATCH)
    unused._WATCH.clear()
    try:
        first = unused.install(lambda found: None)
        second_sink: list = []
        second = unused.install(second_sink.append)
        assert second is first and len(set(hooks) - before) == 1
        second.report({"sentence": "x"})
        assert second_sink == [{"sentence": "x"}]
    finally:
        for key in set(hooks) - before:
            del hooks[key]
        unused._WATCH[:] = saved
