"""``torchdoctor run`` at its edges (issue 16, item 10): output paths against a script's ``chdir``,
log mode's count past the 100 reports kept, and a break stop that the script catches (bare
``except:``) or that happens in a thread, one that happens after the main body returned (a
non-daemon thread still training), and the order of the report, the script's ``finally:`` output
and the closing line. Real ``python -m torchdoctor run`` processes on tiny
scripts written into ``tmp_path`` (each imports torch once; a few steps each)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from support.paths import PYBACKEND

DETAILS = "  kind:     nonfinite_output"  # a line of the detailed report under the sentence
LINE = "[torchdoctor] anomaly: "
OURS = ("anomaly_cli.py", "watch.py", "AnomalyStop", "runpy")
STOPPED = "torchdoctor run: stopped at the anomaly reported above: "
CAUGHT = "torchdoctor run: the script caught the stop at the anomaly reported above (a bare `except:`"


def run(cwd: Path, *args: str, merged: bool = False, via: tuple = ("-m", "torchdoctor")) -> subprocess.CompletedProcess:
    """``merged``: stderr into stdout, one stream, to check the order of the script's lines and ours.
    ``via``: how the interpreter reaches our CLI (``-m torchdoctor``, or a launcher script's path)."""
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    return subprocess.run(
        [sys.executable, *via, "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        env=env,
        timeout=180,
        cwd=str(cwd),
    )


CHDIR = """
import os
os.chdir("sub")
import torch
layer = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    layer(torch.randn(4, 2)).pow(2).mean().backward()
    optimizer.step()
"""


def test_output_paths_are_where_the_command_started_not_where_the_script_went(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "chdir.py").write_text(CHDIR)
    args = ["--json", "rel.json", "--report", "rep.json", "--tensorboard", "tb", "chdir.py"]
    result = run(tmp_path, *args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert list((tmp_path / "sub").iterdir()) == []  # nothing followed the script into sub/
    assert json.loads((tmp_path / "rel.json").read_text()) == {"anomalies": [], "anomalies_reported": 0}
    assert "findings" in json.loads((tmp_path / "rep.json").read_text())
    if importlib.util.find_spec("tensorboard") is not None:  # without it the run says so and writes none
        assert (tmp_path / "tb").is_dir()


MANY = """
import torch
layer = torch.nn.Linear(2, 2)
for step in range(130):
    layer(torch.full((1, 2), float("nan"))).sum().backward()
print("finished")
"""


def test_log_mode_counts_every_anomaly_and_says_which_the_json_kept(tmp_path):
    (tmp_path / "many.py").write_text(MANY)
    result = run(tmp_path, "--anomaly", "log", "--json", "r.json", "many.py")
    data = json.loads((tmp_path / "r.json").read_text())
    reports = data["anomalies"]
    assert result.returncode == 1 and "finished" in result.stdout
    assert result.stderr.count(LINE) == data["anomalies_reported"] == 130  # one a step, all counted
    assert len(reports) == 100 and {r["kind"] for r in reports} == {"nonfinite_output"}
    steps = [r["step"] for r in reports]
    assert steps == list(range(50)) + list(range(80, 130))  # where it began, and the latest
    assert "torchdoctor run: 130 anomalies reported (100 kept in the JSON: the first and the latest)" in result.stderr


BARE_EXCEPT = """
import torch
layer = torch.nn.Linear(2, 2)
try:
    layer(torch.full((1, 2), float("nan"))).sum().backward()
except:
    print("swallowed")
print("went on")
"""

RERAISED = """
import torch
layer = torch.nn.Linear(2, 2)
try:
    layer(torch.full((1, 2), float("nan"))).sum().backward()
except BaseException:
    raise RuntimeError("training failed")
"""

OWN_EXIT = """
import sys
import torch
layer = torch.nn.Linear(2, 2)
try:
    layer(torch.full((1, 2), float("nan"))).sum().backward()
except BaseException:
    sys.exit(3)
"""


def _sentence(text: str) -> str:
    """The sentence of the one ``[torchdoctor] anomaly:`` line in ``text``."""
    return text.split(LINE)[1].splitlines()[0]


def _one_report(stderr: str, script: Path) -> None:
    assert stderr.count(LINE) == 1 and stderr.count(DETAILS) == 1, stderr[-2000:]
    assert stderr.index(LINE) < stderr.index(DETAILS) < stderr.index(f"stack:    {script}:")
    for internal in OURS:
        assert internal not in stderr


def test_a_stop_caught_by_a_bare_except_still_prints_the_report_and_fails(tmp_path):
    script = tmp_path / "bare.py"
    script.write_text(BARE_EXCEPT)
    result = run(tmp_path, str(script))
    assert result.returncode == 1 and result.stdout.splitlines() == ["swallowed", "went on"]
    _one_report(result.stderr, script)
    assert "Traceback" not in result.stderr
    # the last line names the anomaly again, below what the script printed after its report
    last = result.stderr.splitlines()[-1]
    assert last.startswith(CAUGHT) and last.endswith(": " + _sentence(result.stderr))


def test_an_error_raised_over_the_stop_shows_the_users_frames_and_the_scripts_worse_status_wins(tmp_path):
    reraised = tmp_path / "reraised.py"
    reraised.write_text(RERAISED)
    result = run(tmp_path, str(reraised))
    assert result.returncode == 1 and "RuntimeError: training failed" in result.stderr
    _one_report(result.stderr, reraised)
    own = tmp_path / "own_exit.py"
    own.write_text(OWN_EXIT)
    result = run(tmp_path, str(own))
    assert result.returncode == 3  # the script's own status, as docs/anomaly.md orders them
    _one_report(result.stderr, own)


THREADS = """
import threading
import torch


def train():
    layer = torch.nn.Linear(2, 2)
    layer(torch.full((1, 2), float("nan"))).sum().backward()
    print("the trainer went on")


def other():
    raise ValueError("not ours")


for target, name in ((train, "trainer"), (other, "other")):
    thread = threading.Thread(target=target, name=name)
    thread.start()
    thread.join()
print("main done")
"""


def test_a_threads_anomaly_prints_the_report_not_our_traceback(tmp_path):
    script = tmp_path / "threads.py"
    script.write_text(THREADS)
    result = run(tmp_path, str(script))
    assert result.returncode == 1 and result.stdout.splitlines() == ["main done"]
    _one_report(result.stderr, script)
    assert "thread 'trainer' stopped at the anomaly reported above" in result.stderr
    # any other exception in a thread still goes to Python's own hook
    assert "Exception in thread other" in result.stderr and "ValueError: not ours" in result.stderr
    assert result.stderr.count("Traceback") == 1


FINALLY = """
import torch
layer = torch.nn.Linear(2, 2)
try:
    for step in range(3):
        x = torch.full((1, 2), float("nan")) if step == 1 else torch.randn(1, 2)
        layer(x).sum().backward()
finally:
    print("saving a checkpoint")
"""


def test_the_closing_line_comes_after_the_scripts_finally_output(tmp_path):
    script = tmp_path / "finally.py"
    script.write_text(FINALLY)
    result = run(tmp_path, str(script), merged=True)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout[-2000:]
    _one_report(result.stdout, script)  # in full where it happened, before the script's cleanup
    assert lines[0].startswith(LINE + "NaN in the output of `layer`")
    assert lines[-2:] == ["saving a checkpoint", STOPPED + _sentence(result.stdout)]


MAIN_BODY_RETURNED = """
import os
import signal
import sys
import threading
import time


def main_body_returned(here=__file__):  # no frame of this file left on the main thread's stack
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None:
        if frame.f_code.co_filename == here:
            return False
        frame = frame.f_back
    return True
"""

LATE_THREAD = (
    MAIN_BODY_RETURNED
    + """
from concurrent.futures import ThreadPoolExecutor

import torch


def train():
    while not main_body_returned():
        time.sleep(0.01)
    layer = torch.nn.Linear(2, 2)
    for step in range(3):
        x = torch.full((1, 2), float("nan")) if step == 1 else torch.randn(1, 2)
        layer(x).sum().backward()
    print("the trainer went on")


pool = ThreadPoolExecutor(1)  # never shut down: its idle worker must not keep the run waiting
pool.submit(int).result()
threading.Thread(target=train, name="trainer").start()
print("main body done")
"""
)


def test_a_thread_still_training_after_the_main_body_returned_is_watched_to_its_end(tmp_path):
    script = tmp_path / "late_thread.py"
    script.write_text(LATE_THREAD)
    result = run(tmp_path, "--json", "r.json", str(script))
    data = json.loads((tmp_path / "r.json").read_text())
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stdout.splitlines() == ["main body done"]
    assert data["anomalies_reported"] == 1 and [r["kind"] for r in data["anomalies"]] == ["nonfinite_output"]
    assert data["anomalies"][0]["step"] == 1
    _one_report(result.stderr, script)
    assert "Traceback" not in result.stderr  # our one line, not Python's default hook
    assert "thread 'trainer' stopped at the anomaly reported above" in result.stderr
    assert result.stderr.splitlines()[-1] == STOPPED + _sentence(result.stderr)


INTERRUPTED_WAIT = (
    MAIN_BODY_RETURNED
    + """

def work():
    while not main_body_returned():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the run waits for this thread
    time.sleep(1)


# As in a terminal: a run started in the background by a non-interactive shell (a CI script's
# `cmd &`) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler.
signal.signal(signal.SIGINT, signal.default_int_handler)
threading.Thread(target=work, name="worker").start()
print("main body done")
"""
)


def test_ctrl_c_while_waiting_for_the_scripts_threads_is_130_with_a_line(tmp_path):
    script = tmp_path / "interrupted_wait.py"
    script.write_text(INTERRUPTED_WAIT)
    result = run(tmp_path, str(script))
    assert result.returncode == 130 and result.stdout.splitlines() == ["main body done"]
    assert result.stderr.splitlines() == ["torchdoctor run: interrupted (KeyboardInterrupt), exit status 130"]


INPLACE = """
import torch
layer = torch.nn.Linear(4, 4)
x = torch.randn(8, 4, requires_grad=True)
loss = layer(x).pow(2).mean()
with torch.no_grad():
    layer.weight.mul_(2.0)  # the weight backward needs, modified in place
loss.backward()
"""


def test_an_error_inside_backward_shows_the_users_frames_not_the_watchs_wrappers(tmp_path):
    # autograd raises from inside the watch's backward() wrappers: only the script's and torch's
    # frames are printed, as plain Python would
    (tmp_path / "inplace.py").write_text(INPLACE)
    result = run(tmp_path, "inplace.py")
    assert result.returncode == 1, result.stderr[-2000:]
    assert "modified by an inplace operation" in result.stderr
    assert 'inplace.py", line 8' in result.stderr and "loss.backward()" in result.stderr
    assert os.path.join("runtime", "anomaly") not in result.stderr
    assert not any(word in result.stderr for word in OURS)


LAUNCHER = """
import sys
from torchdoctor.cli import main
if __name__ == "__main__":
    sys.exit(main())
"""

NAN_WEIGHT = """
import torch
from torch import nn
layer = nn.Linear(3, 2)
with torch.no_grad():
    layer.weight[0, 0] = float("nan")
layer(torch.randn(4, 3)).sum().backward()
"""


def test_the_stack_ends_at_the_script_not_at_the_launcher(tmp_path):
    """``torchdoctor`` as pip installs it is a small script (``.venv/bin/torchdoctor``) whose
    module code calls our CLI: its frame looks like the user's, yet is not the script's."""
    (tmp_path / "launcher.py").write_text(LAUNCHER)
    (tmp_path / "nan_weight.py").write_text(NAN_WEIGHT)
    result = run(tmp_path, "--json", "anomalies.json", "nan_weight.py", via=("launcher.py",))
    assert result.returncode == 1, result.stderr[-2000:]
    stacks = [r["user_stack"] for r in json.loads((tmp_path / "anomalies.json").read_text())["anomalies"]]
    assert stacks and all(stack for stack in stacks)
    for stack in stacks:
        assert all("nan_weight.py" in frame for frame in stack), stack
    assert "launcher.py" not in result.stderr, result.stderr[-2000:]
    assert "nan_weight.py:7 in <module>" in result.stderr
