"""``torchdoctor run --monitor --report`` on every sample of sample_workspace/monitor/.

Each sample runs in a subprocess (one intra-op thread, so that a loaded machine's thread
contention does not turn a 1 ms step into 100 ms); the report says which verdicts fired and over
which steps, and the healthy runs must stay silent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support.paths import SAMPLES

MONITOR = SAMPLES / "monitor"

# sample -> {kind: (first step at least, last step at most)}; kinds not listed must not fire
EXPECTED = {
    "healthy.py": {},
    "gan.py": {},
    "overfitting.py": {"overfitting": (1, 150)},
    "input_bound.py": {"input_bound": (1, 80)},
    "flat.py": {"not_decreasing": (1, 80), "underfitting": (1, 80), "update_ratio_low": (1, 80)},
    "oscillating.py": {"oscillating": (1, 70), "update_ratio_high": (1, 70)},
    "leaking.py": {"memory_growth": (1, 130)},
}


def run(*args: str, cwd=MONITOR, timeout: float = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_sample_verdicts(sample, tmp_path):
    report_path = tmp_path / "r.json"
    done = run("--monitor", "--report", str(report_path), sample)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(report_path.read_text())
    kinds = {f["kind"]: f for f in report["findings"]}
    assert set(kinds) == set(EXPECTED[sample]), done.stderr[-3000:]
    for kind, (low, high) in EXPECTED[sample].items():
        first, last = kinds[kind]["range"]
        assert low <= first <= last <= high, kinds[kind]
        assert kinds[kind]["severity"] == "warning"
        where = kinds[kind]["where"]
        assert where and where["path"].endswith(sample) and where["line"] > 0, kinds[kind]
        assert f"monitor: {kind} (warning" in done.stderr
    assert report["steps"] > 0 and "opt0/loss" in report["series"]
    if sample == "gan.py":
        assert "opt1/loss" in report["series"] and report["series"]["opt1/loss"]["count"] == 100
    if sample in ("healthy.py", "overfitting.py", "flat.py"):
        assert report["series"]["eval/loss"]["count"] >= 4


def test_fail_on_warning_and_html(tmp_path):
    page = tmp_path / "r.html"
    done = run("--monitor", "--fail-on", "warning", "--report", str(page), "oscillating.py")
    assert done.returncode == 1, done.stderr[-2000:]
    text = page.read_text()
    assert "<svg" in text and "oscillating" in text and "polyline" in text
    assert "http://" not in text and "https://" not in text and "<script" not in text  # offline, self-contained


def test_healthy_fail_on_warning_exits_0_and_bad_report_name(tmp_path):
    assert run("--monitor", "--fail-on", "warning", "healthy.py").returncode == 0
    bad = run("--report", str(tmp_path / "r.txt"), "healthy.py")
    assert bad.returncode == 2 and ".json or .html" in bad.stderr


def test_nan_loss_is_an_error(tmp_path):
    script = tmp_path / "nan_loss.py"
    script.write_text(
        "import torch\n"
        "w = torch.nn.Parameter(torch.ones(3))\n"
        "opt = torch.optim.SGD([w], lr=0.1)\n"
        "for step in range(8):\n"
        "    opt.zero_grad()\n"
        "    loss = (w * (float('nan') if step == 5 else 1.0)).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    report_path = tmp_path / "r.json"
    done = run("--anomaly", "log", "--monitor", "--report", str(report_path), str(script), cwd=tmp_path)
    assert done.returncode == 1
    found = json.loads(report_path.read_text())["findings"]
    nan = [f for f in found if f["kind"] == "loss_nan"]
    assert nan and nan[0]["severity"] == "error" and nan[0]["step"] == 6, found


TRAINS_IN_CHILDREN = """
import torch
import torch.multiprocessing as mp


def train(model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).pow(2).mean().backward()
        optimizer.step()


if __name__ == "__main__":
    model = torch.nn.Linear(4, 1)
    model.share_memory()
    workers = [mp.Process(target=train, args=(model,)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("trained in", len(workers), "processes")
"""

LOADS_ONLY = """
import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    loader = DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=8, num_workers=2)
    print(sum(len(b[0]) for b in loader), "samples loaded")
"""


@pytest.mark.parametrize(
    "text, why",
    [
        (TRAINS_IN_CHILDREN, "no step ran in this process, which started 2 child process(es) (multiprocessing)"),
        (LOADS_ONLY, "no step ran: no optimizer.step() and no loss.backward() was seen"),  # loader workers not counted
    ],
)
def test_a_run_with_no_step_says_why(text, why, tmp_path):
    """Hogwild trains in child processes: the monitor, which records its own process, says so
    instead of a bare "0 training steps"; DataLoader workers are not counted as such."""
    script = tmp_path / "script.py"
    script.write_text(text)
    done = run("--monitor", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "[torchdoctor] monitor: 0 training steps, 0 finding(s)" in done.stderr
    assert f"[torchdoctor] monitor: {why}" in done.stderr
