"""Job control with real worker processes: protocol safety, errors in words, time limit, cancel."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from support.checks import MODELS, PYTHON, write
from torchdoctor.checks import jobs


def run(spec: jobs.JobSpec, progress=None, stderr=None) -> dict:
    return asyncio.run(jobs.run_check(spec, on_progress=progress, on_stderr=stderr))


def spec(check: str, path: Path, cls: str, **kw) -> jobs.JobSpec:
    kw.setdefault("python", PYTHON)
    return jobs.JobSpec(check, str(path), cls, **kw)


NOISY = """
import os, sys
import torch.nn as nn

print("hello from import")                      # Python-level print
os.write(1, b'{"event": "result", "result": {"verdict": "FAKE"}}\\n')   # C-level write to fd 1


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, x):
        print("in forward", x.shape)
        sys.stdout.write("not json\\n")
        return self.fc(x)
"""


def test_user_prints_never_reach_the_protocol(tmp_path: Path):
    lines, fractions = [], []
    r = run(
        spec("overfit", write(tmp_path, "noisy.py", NOISY), "Noisy"), lambda f, m: fractions.append(f), lines.append
    )
    assert r["verdict"] == "PASS", r["headline"]
    assert "hello from import" in lines and any(line.startswith("in forward") for line in lines)
    assert any('"verdict": "FAKE"' in line for line in lines)  # the fake result went to stderr
    assert fractions and fractions == sorted(fractions)
    assert r["python"] == PYTHON and r["durationSeconds"] > 0


def test_interpreter_without_torch_is_named(no_torch_python: str):
    r = run(spec("shapes", MODELS / "mlp.py", "TinyMLP", python=no_torch_python))
    assert r["verdict"] == "ERROR" and r["error"]["kind"] == "no-torch"
    assert r["headline"] == f"torch is not installed in {no_torch_python}: pip install torch or set torchDoctor.python"


def test_missing_interpreter(tmp_path: Path):
    r = run(spec("shapes", MODELS / "mlp.py", "TinyMLP", python=str(tmp_path / "nope" / "python")))
    assert r["error"]["kind"] == "no-interpreter" and "torchDoctor.python" in r["headline"]


def test_unknown_check_and_missing_file_are_usage_errors(tmp_path: Path):
    assert run(spec("speed", MODELS / "mlp.py", "TinyMLP"))["error"]["kind"] == "usage"
    assert run(spec("shapes", tmp_path / "gone.py", "X"))["error"]["kind"] == "usage"


def test_syntax_error_in_the_unsaved_text(tmp_path: Path):
    r = run(
        spec(
            "shapes",
            MODELS / "mlp.py",
            "TinyMLP",
            source="import torch.nn as nn\n\nclass TinyMLP(nn.Module)\n    pass\n",
        )
    )
    assert r["error"]["kind"] == "syntax-error"
    assert r["headline"].startswith("mlp.py has a syntax error at line 3")
    assert r["error"]["detail"].splitlines()[0] == "class TinyMLP(nn.Module)"


def test_time_limit_kills_the_whole_process_group(tmp_path: Path):
    child_pid = tmp_path / "child"
    path = write(
        tmp_path,
        "hang.py",
        f"""
        import subprocess, sys, time
        import torch.nn as nn

        class Hang(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                open({str(child_pid)!r}, "w").write(str(p.pid))
                while True:
                    time.sleep(0.05)
        """,
    )
    # The limit covers the worker's start too (importing torch takes seconds on a busy machine):
    # 15 s leaves room to reach the forward and spawn the child however loaded the CI box is.
    started = time.monotonic()
    r = run(spec("shapes", path, "Hang", timeout=15))
    assert r["error"]["kind"] == "timeout"
    assert time.monotonic() - started < 15 + 10
    assert r["headline"].startswith("The Shape trace on Hang did not finish within 15 s, so the worker was stopped.")
    assert child_pid.exists(), "the worker never reached the forward within the limit"
    assert _gone(int(child_pid.read_text())), "the model's own child process survived"


def test_worker_crash_gives_the_signal_and_the_last_stderr_lines(tmp_path: Path):
    path = write(
        tmp_path,
        "crash.py",
        """
        import os, signal, sys
        import torch.nn as nn

        class Crash(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                print("native library: fatal error in kernel", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
        """,
    )
    r = run(spec("shapes", path, "Crash"))
    assert r["error"]["kind"] == "worker-crash"
    assert "(signal SIGKILL): native library: fatal error in kernel" in r["headline"]


def test_cancelling_the_job_kills_the_worker(tmp_path: Path):
    pid_file = tmp_path / "pid"
    path = write(
        tmp_path,
        "slow.py",
        f"""
        import os, time
        import torch.nn as nn
        open({str(pid_file)!r}, "w").write(str(os.getpid()))

        class Slow(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                time.sleep(600)
        """,
    )

    async def scenario() -> int:
        task = asyncio.ensure_future(jobs.run_check(spec("shapes", path, "Slow", timeout=120)))
        for _ in range(400):
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return int(pid_file.read_text())

    assert _gone(asyncio.run(scenario()))


def test_a_result_line_longer_than_asyncios_default_limit(tmp_path: Path):
    path = write(
        tmp_path,
        "deep.py",
        """
        import torch.nn as nn

        class Deep(nn.Sequential):
            def __init__(self):
                super().__init__(nn.Linear(3, 3), *[nn.Identity() for _ in range(1500)])
        """,
    )
    r = run(spec("shapes", path, "Deep"))
    assert r["verdict"] == "PASS" and len(r["table"]["rows"]) == 1502


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


OLD_PYTHON = "/root/.pyenv/versions/3.8.18/bin/python"


@pytest.mark.skipif(not os.path.exists(OLD_PYTHON), reason="no Python 3.8 on this machine")
def test_too_old_an_interpreter_is_said_so():
    r = run(spec("shapes", MODELS / "mlp.py", "TinyMLP", python=OLD_PYTHON))
    assert r["error"]["kind"] == "no-interpreter"
    assert r["headline"].startswith(f"{OLD_PYTHON} is too old: Torch Doctor checks need Python >= 3.9, this is 3.8")
