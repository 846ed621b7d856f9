"""Large documents are analysed in a child process (torchdoctor/background.py, used by
server/model_index.py): the same answers and notes as in the server's thread, a note when the
child dies or runs past its deadline (and then it is killed), results of an older version not
kept, a reopened document discovered afresh, no child outliving the server, and no server exit
waiting for a busy child."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from typing import List, Optional, Tuple

import pytest

from torchdoctor.background import LARGE_DOCUMENT, STOPPED
from torchdoctor.checks.safe_discovery import discover_safely
from torchdoctor.server import model_index
from torchdoctor.server.model_index import DiscoveryIndex, ModelIndex

MODEL = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"
PADDING = "".join(f"value_{i} = {i}  # a line to make the file large\n" for i in range(8000))


@pytest.fixture(autouse=True)
def fresh_child():
    model_index.CHILD.reset()
    yield
    model_index.CHILD.reset()


def _exit_abruptly(source: str, path: str):
    os._exit(3)  # as a crash of the parser or the kernel's OOM killer would end it


def test_a_large_document_is_discovered_in_a_child_with_the_threads_notes(tmp_path):
    text = MODEL + PADDING
    assert len(text) > LARGE_DOCUMENT
    found, note = asyncio.run(ModelIndex().get("file:///big.py", str(tmp_path / "big.py"), text, 1))
    assert note is None and [m.name for m in found.models] == ["Net"]
    assert model_index.CHILD.pid() not in (None, os.getpid())
    # recursion and memory inside the child: the same notes as in the server's own thread
    for hostile in ("x = a" + ".b" * 150_000 + "\n", "x = " + "not " * 100_000 + "a\n"):
        assert len(hostile) > LARGE_DOCUMENT
        _, in_child = asyncio.run(ModelIndex().get("file:///hostile.py", "hostile.py", hostile, 1))
        if sys.version_info < (3, 11):  # the parser may crash on it (background.py): the child's stop is the note
            assert in_child is not None and in_child.message.startswith("cannot analyse this file")
            continue
        _, in_thread = discover_safely(hostile, "hostile.py")
        assert in_child is not None and in_thread is not None and in_child.message == in_thread.message


@pytest.mark.parametrize("level", ["+a", "()", ".b"])
def test_no_text_parsed_in_the_server_crashes_this_pythons_parser(level):
    """The densest nesting (two characters a level) that still fits under ``LARGE_DOCUMENT``, parsed
    by this interpreter in a process of its own: an error (RecursionError, MemoryError) or a tree,
    never a crash. Python 3.9 and 3.10 crash at ~100,000 levels, which 256K characters held."""
    text = "x = a" + level * ((LARGE_DOCUMENT - 8) // len(level))
    assert len(text) <= LARGE_DOCUMENT
    code = "import ast, sys\ntry:\n    ast.parse(sys.stdin.read())\nexcept (RecursionError, MemoryError, SyntaxError):\n    pass\n"
    done = subprocess.run([sys.executable, "-c", code], input=text, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, (
        f"the parser of {sys.version.split()[0]} ended with {done.returncode}: {done.stderr[-300:]}"
    )


def test_a_child_that_stops_is_a_note_and_the_next_document_gets_a_new_child(tmp_path):
    async def scenario():
        crashing = ModelIndex(discover=_exit_abruptly)
        found, note = await crashing.get("file:///big.py", "big.py", MODEL + PADDING, 1)
        assert found.models == [] and note is not None
        assert note.message == STOPPED and note.message.startswith("cannot analyse this file: the process")
        found, note = await ModelIndex().get("file:///big.py", "big.py", MODEL + PADDING, 2)
        assert note is None and [m.name for m in found.models] == ["Net"]

    asyncio.run(scenario())


CALLS: List[str] = []
SLOW = threading.Event()


def _recorded(source: str, path: str) -> Tuple[Optional[str], Optional[str]]:
    CALLS.append(source)
    if source == "slow":
        SLOW.wait(10)  # a ceiling; set as soon as the newer version is done
    return (None, "does not parse") if source == "broken" else (source, None)


def test_a_result_that_comes_back_after_a_newer_version_is_not_kept():
    index: DiscoveryIndex[str, str] = DiscoveryIndex(_recorded, lambda: "nothing", lambda why: why)
    CALLS.clear()
    SLOW.clear()

    async def scenario():
        older = asyncio.ensure_future(index.get("u", "p", "slow", 1))
        while not CALLS:
            await asyncio.sleep(0.01)
        assert await index.get("u", "p", "fast", 2) == ("fast", None)
        SLOW.set()
        assert await older == ("slow", None)  # its own request is answered
        assert await index.get("u", "p", "fast", 2) == ("fast", None)  # version 2's result is kept
        assert await index.get("u", "p", "broken", 3) == ("fast", "does not parse")  # the last good: 2's
        assert await index.get("u", "p", "slow", 1) == ("slow", None)

    asyncio.run(scenario())
    assert CALLS == ["slow", "fast", "broken", "slow"]  # version 1's result was not kept


def test_a_reopened_document_is_a_new_one_whether_or_not_it_was_forgotten():
    # VS Code counts a reopened document's versions from 1 again. Before, the highest version ever
    # asked for stayed: every later result counted as stale, nothing was cached and the last good
    # result stayed the old text's.
    index: DiscoveryIndex[str, str] = DiscoveryIndex(_recorded, lambda: "nothing", lambda why: why)
    CALLS.clear()

    async def scenario():
        assert await index.get("u", "p", "old", 5) == ("old", None)
        assert await index.get("u", "p", "new", 1) == ("new", None)  # reopened without a didClose
        assert await index.get("u", "p", "new", 1) == ("new", None)  # kept: not parsed again
        assert await index.get("u", "p", "broken", 2) == ("new", "does not parse")  # the last good: new's
        index.forget("u")  # didClose
        assert await index.get("u", "p", "broken", 1) == ("nothing", "does not parse")  # nothing of before
        assert await index.get("u", "p", "again", 1) == ("nothing", "does not parse")  # version 1 is kept

    asyncio.run(scenario())
    assert CALLS == ["old", "new", "broken", "broken"]


def test_a_result_that_comes_back_after_its_document_was_closed_is_not_kept():
    index: DiscoveryIndex[str, str] = DiscoveryIndex(_recorded, lambda: "nothing", lambda why: why)
    CALLS.clear()
    SLOW.clear()

    async def scenario():
        closed = asyncio.ensure_future(index.get("u", "p", "slow", 3))
        while not CALLS:
            await asyncio.sleep(0.01)
        index.forget("u")  # closed while its discovery runs, then reopened
        assert await index.get("u", "p", "fast", 1) == ("fast", None)
        SLOW.set()
        assert await closed == ("slow", None)  # its own request is answered
        assert await index.get("u", "p", "broken", 2) == ("fast", "does not parse")  # not the closed text's

    asyncio.run(scenario())


def _hang(source: str, path: str):
    time.sleep(600)  # a pathological parse


def test_a_discovery_past_its_deadline_is_a_note_the_child_is_killed_and_the_work_behind_it_is_done(monkeypatch):
    monkeypatch.setattr(model_index.CHILD, "deadline", 2.0)
    stuck_pid = model_index.CHILD.submit(os.getpid).result()  # started: the deadline is the work's alone

    async def scenario():
        stuck = asyncio.ensure_future(ModelIndex(discover=_hang).get("file:///stuck.py", "stuck.py", PADDING, 1))
        await asyncio.sleep(0)  # submitted
        behind = asyncio.ensure_future(ModelIndex().get("file:///big.py", "big.py", MODEL + PADDING, 1))
        started = time.monotonic()
        found, note = await stuck
        took = time.monotonic() - started
        assert found.models == [] and note is not None and took < 15, (note, took)
        assert note.message.startswith("analysing this file took longer than 2 s: stopped"), note.message
        # queued behind the stuck call, it was sent once more to a new child, within its own deadline
        found, note = await behind
        assert note is None and [m.name for m in found.models] == ["Net"]

    asyncio.run(scenario())
    assert model_index.CHILD.pid() not in (None, stuck_pid)
    _gone(stuck_pid, "the child past its deadline was not killed")


BUSY_CHILD_AT_EXIT = """
import os, sys, time
from torchdoctor.background import Child
child = Child("test")
print(child.submit(os.getpid).result(), flush=True)
child.submit(time.sleep, 600)  # a parse that never ends
time.sleep(0.2)
sys.exit(0)  # a clean exit: concurrent.futures would wait for the child's work
"""


def test_exit_does_not_wait_for_a_busy_child():
    out = subprocess.run([sys.executable, "-c", BUSY_CHILD_AT_EXIT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    _gone(int(out.stdout.split()[0]), "the busy child outlived its parent")


KILLED_WITH_WORK_QUEUED = """
import asyncio, os, sys, time
from torchdoctor.background import Child, ChildTimedOut
child = Child("test")
child.deadline = 1.0
print(child.submit(os.getpid).result(), flush=True)

async def scenario():
    stuck = asyncio.ensure_future(child.run(time.sleep, 600))
    await asyncio.sleep(0)
    child.submit(len, "x" * 4_000_000)  # queued behind it: more than a pipe holds, still being sent
    try:
        await stuck
    except ChildTimedOut:
        print("timed out", flush=True)

asyncio.run(scenario())
sys.exit(0)  # a clean exit: the pool of the killed child must not hold it
"""


def test_exit_after_a_child_was_killed_with_work_queued_for_it():
    """Python 3.9's ``ProcessPoolExecutor`` joined the thread still writing the queued work into the
    killed child's pipe, which nobody reads: the process never ended (``_kill`` cancels that join)."""
    out = subprocess.run([sys.executable, "-c", KILLED_WITH_WORK_QUEUED], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split()[1:] == ["timed", "out"], (out.stdout, out.stderr[-500:])
    _gone(int(out.stdout.split()[0]), "the killed child outlived its parent")


CHILD_OF_A_DYING_SERVER = """
import os, sys
from torchdoctor.background import Child
child = Child("test")
# as on Windows, where a process's parent id never changes: only the parent's sentinel can tell
child.submit(exec, "import os; os.getppid = lambda: PARENT", {"PARENT": os.getpid()}).result()
print(child.submit(os.getpid).result(), flush=True)
os._exit(0)  # no clean-up, as after SIGKILL
"""


def test_the_child_does_not_outlive_the_server_even_if_its_parent_id_never_changes():
    out = subprocess.run(
        [sys.executable, "-c", CHILD_OF_A_DYING_SERVER], capture_output=True, text=True, timeout=60, check=True
    )
    _gone(int(out.stdout.split()[0]), "the child outlived its parent")


def _gone(pid: int, message: str) -> None:
    deadline = time.monotonic() + 30  # a ceiling
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    raise AssertionError(f"{message}: {pid}")
