"""The data check's worker process, run for real: a dataset that crashes it, exits it or hangs it
is named with the split, the sample index and the line, in our words, never as "the worker
stopped without a result"; a hang ends at the time limit with the stuck line and its stack, and
leaves no process behind. Each test writes a small data file shaped like real code and runs the
job as the editor and the CLI do."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path

import pytest

from torchdoctor.data_checks import findings as F
from torchdoctor.data_checks.jobs import DataJobSpec, run_data_check

HANG_LIMIT = 15.0  # seconds: the worker's start (importing torch, forking DataLoader workers) must fit well
# inside it on a loaded CI machine too, or the hang is caught at import instead of at sample 3

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and fork: the crash and hang paths")


def run_job(tmp_path: Path, source: str, name: str, timeout: float = 120.0) -> dict:
    path = tmp_path / "data.py"
    path.write_text(textwrap.dedent(source))
    return asyncio.run(run_data_check(DataJobSpec(str(path), name, timeout=timeout, cwd=str(tmp_path))))


def line_of(tmp_path: Path, text: str) -> int:
    lines = (tmp_path / "data.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


DECODER = """
    import ctypes
    import os
    import sys

    import torch
    from torch.utils.data import DataLoader, Dataset


    class Frames(Dataset):
        \"\"\"Video frames decoded by a C library; frame 6 of the file is corrupt.\"\"\"

        def __init__(self, fail="segfault"):
            self.fail = fail

        def __len__(self):
            return 10

        def __getitem__(self, i):
            if i == 6:
                if self.fail == "segfault":
                    ctypes.string_at(0)  # the decoder reads a null pointer
                elif self.fail == "os-exit":
                    os._exit(7)  # the decoder gives up on the whole process
                else:
                    sys.exit(4)
            return torch.zeros(3, 8, 8), 0


    def segfault():
        return {"train": Frames("segfault")}


    def os_exit():
        return {"train": DataLoader(Frames("os-exit"), batch_size=4, shuffle=True)}


    def sys_exit():
        return {"train": Frames("sys-exit")}


    def in_workers():
        return {"train": DataLoader(Frames("segfault"), batch_size=2, shuffle=True, num_workers=2)}
"""


def test_a_segfault_in_getitem_names_the_signal_the_sample_and_the_line(tmp_path: Path):
    result = run_job(tmp_path, DECODER, "segfault")
    error = result["error"]
    assert result["verdict"] == F.ERROR and error["kind"] == "dataset-error" and error["cause"] == "process-ended"
    assert error["split"] == "train" and error["index"] == 6 and error["stage"] == "__getitem__"
    assert error["source"] == {"file": str(tmp_path / "data.py"), "line": line_of(tmp_path, "ctypes.string_at(0)")}
    headline = result["headline"]
    assert headline.startswith("train: the dataset's code ended the data-check worker while drawing sample 6")
    assert "killed by SIGSEGV" in headline and "ctypes.string_at(0)" in headline and "`dataset[6]`" in headline
    assert "could not draw train" in headline and "without a result" not in headline
    assert str(tmp_path / "data.py") in error["detail"] and "torchdoctor" not in error["detail"]


def test_os_exit_in_a_shuffled_loader_names_the_status_and_the_sample(tmp_path: Path):
    result = run_job(tmp_path, DECODER, "os_exit")
    error = result["error"]
    assert error["cause"] == "process-ended" and error["index"] == 6
    assert error["exit"].startswith("it exited with status 7")
    assert "while drawing sample 6 (in `__getitem__`): it exited with status 7" in result["headline"]
    assert "raise an exception instead" in result["headline"]


def test_sys_exit_in_getitem_is_not_taken_for_an_import_time_exit(tmp_path: Path):
    result = run_job(tmp_path, DECODER, "sys_exit")
    error = result["error"]
    assert error["kind"] == "dataset-error" and error["index"] == 6 and error["exit"] == "sys.exit(4)"
    assert result["headline"].startswith("train: the dataset's code called sys.exit(4) while drawing sample 6")
    assert "if __name__" not in result["headline"] and "torchdoctor" not in error["detail"]


def test_a_dataloader_worker_that_crashed_says_it_in_the_same_words_with_the_sample(tmp_path: Path):
    result = run_job(tmp_path, DECODER, "in_workers")
    error = result["error"]
    assert error["cause"] == "worker-died" and error["index"] == 6 and error["stage"] == "__getitem__"
    headline = result["headline"]
    # "DataLoader worker 1", or "a DataLoader worker" when it died while iter() started them
    assert headline.startswith(("train: DataLoader worker", "train: a DataLoader worker"))
    assert "died while drawing sample 6 (in `__getitem__`)" in headline
    assert "SIGSEGV" in headline and "could not draw train" in headline


PHOTOS = """
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Photos(Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            side = 28 if i == 11 else 32  # one photo was exported at another size
            return torch.rand(3, side, side), i % 4


    def torchdoctor_data():
        return {"train": DataLoader(Photos(), batch_size=8, shuffle=True, num_workers=2)}
"""


def test_a_collate_failure_in_a_shuffled_worker_names_the_sample_it_drew(tmp_path: Path):
    result = run_job(tmp_path, PHOTOS, "torchdoctor_data")
    error = result["error"]
    assert error["cause"] == "collate-failed" and error["index"] == 11 and error["differs"] == "shape"
    assert isinstance(error["worker"], int) and 11 in error["batch"]
    assert "sample 11 (entry" in result["headline"] and "in DataLoader worker" in result["headline"]
    assert "resize storage" in error["detail"] or "stack expects" in error["detail"]  # torch's message


REMOTE = """
    import os
    import signal
    import threading

    import torch
    from torch.utils.data import DataLoader, Dataset

    PIDS = os.environ.get("PIDS_FILE", "")
    SERVER = threading.Lock()
    SERVER.acquire()  # the image server that never answers


    class Remote(Dataset):
        \"\"\"Images fetched from a server; the request for image 3 waits forever.\"\"\"

        def __len__(self):
            return 10

        def __getitem__(self, i):
            if PIDS:
                with open(PIDS, "a") as f:
                    f.write(f"{os.getpid()}\\n")
            if i == 3:
                self.fetch(i)
            return torch.zeros(3, 8, 8), 0

        def fetch(self, i):
            SERVER.acquire()  # no timeout


    def plain():
        return {"train": Remote()}


    def in_workers():
        return {"train": DataLoader(Remote(), batch_size=2, shuffle=True, num_workers=2)}


    class Inspected(Remote):
        \"\"\"Left with a way to stop and look at one sample: a SIGSTOP, or a breakpoint.\"\"\"

        def __init__(self, how):
            self.how = how

        def fetch(self, i):
            if self.how == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
            else:
                breakpoint()


    def stopped():
        return {"train": Inspected("stop")}


    def at_breakpoint():
        return {"train": Inspected("breakpoint")}
"""


def test_a_hanging_getitem_ends_at_the_limit_naming_the_sample_and_the_stuck_line(tmp_path: Path):
    result = run_job(tmp_path, REMOTE, "plain", timeout=HANG_LIMIT)
    error = result["error"]
    assert error["kind"] == "timeout" and error["cause"] == "hang" and error["index"] == 3 and error["split"] == "train"
    stuck = line_of(tmp_path, "SERVER.acquire()  # no timeout")
    assert error["source"] == {"file": str(tmp_path / "data.py"), "line": stuck}
    headline = result["headline"]
    assert headline.startswith(
        f"train: `__getitem__` of sample 3 did not return within the time limit of {HANG_LIMIT:g} s"
    )
    assert f"stuck at {tmp_path / 'data.py'}:{stuck} in fetch" in headline and "give the wait a timeout" in headline
    detail = error["detail"].splitlines()
    assert "your code first" in detail[0] and "in fetch" in detail[1] and "in __getitem__" in detail[2]
    assert "torchdoctor" not in error["detail"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the process states are read from /proc")
def test_a_hang_in_a_dataloader_worker_names_the_worker_and_leaves_no_process(tmp_path: Path, monkeypatch):
    pids_file = tmp_path / "pids.txt"
    monkeypatch.setenv("PIDS_FILE", str(pids_file))
    result = run_job(tmp_path, REMOTE, "in_workers", timeout=HANG_LIMIT)
    error = result["error"]
    assert error["kind"] == "timeout" and error["index"] == 3 and isinstance(error["worker"], int)
    assert f"of sample 3 in DataLoader worker {error['worker']} did not return" in result["headline"]
    assert error["source"]["line"] == line_of(tmp_path, "SERVER.acquire()  # no timeout")
    assert f"DataLoader worker {error['worker']} (pid " in error["detail"]
    pids = {int(p) for p in pids_file.read_text().split()}
    assert pids and not [p for p in pids if _alive(p)]  # the check's worker and its DataLoader workers


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_a_crash_while_importing_the_file_says_it_was_the_import(tmp_path: Path):
    source = "import ctypes\n\nctypes.string_at(0)  # a broken C extension loaded at import\n"
    result = run_job(tmp_path, source, "x")
    assert result["error"]["kind"] == "import-error" and result["error"]["stage"] == "import"
    assert result["headline"].startswith("Importing data.py ended the data-check worker: it was killed by SIGSEGV")


def test_a_stopped_process_is_said_to_be_stopped_at_the_limit_and_is_killed(tmp_path: Path):
    result = run_job(tmp_path, REMOTE, "stopped", timeout=HANG_LIMIT)
    error = result["error"]
    assert error["kind"] == "timeout" and error["index"] == 3
    assert "The process was stopped (paused by SIGSTOP or a debugger)" in result["headline"]
    assert "find what stopped it" in result["headline"] and "(it was stopped)" in error["detail"]


def test_a_breakpoint_in_getitem_is_said_to_be_one_not_a_broken_sample(tmp_path: Path):
    result = run_job(tmp_path, REMOTE, "at_breakpoint")
    error = result["error"]
    assert error["cause"] == "breakpoint" and error["index"] == 3
    assert result["headline"].startswith("train: the dataset paused at a breakpoint() or pdb.set_trace()")
    assert "BdbQuit" not in result["headline"] and "PYTHONBREAKPOINT=0" in result["headline"]
