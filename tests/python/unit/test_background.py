"""Large documents are analysed in a child process (torchdoctor/background.py, used by
server/model_index.py): the same answers and notes as in the server's thread, a note when the
child dies, results of an older version not kept, and no child outliving the server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from typing import List, Optional, Tuple

import pytest

from torchdoctor.background import LARGE_DOCUMENT
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
        _, in_thread = discover_safely(hostile, "hostile.py")
        assert in_child is not None and in_thread is not None and in_child.message == in_thread.message


def test_a_child_that_stops_is_a_note_and_the_next_document_gets_a_new_child(tmp_path):
    async def scenario():
        crashing = ModelIndex(discover=_exit_abruptly)
        found, note = await crashing.get("file:///big.py", "big.py", MODEL + PADDING, 1)
        assert found.models == [] and note is not None
        assert note.message.startswith("cannot analyse this file: the process analysing it stopped")
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


CHILD_OF_A_DYING_SERVER = """
import os, sys
from torchdoctor.background import Child
child = Child("test")
print(child.submit(os.getpid).result(), flush=True)
os._exit(0)  # no clean-up, as after SIGKILL
"""


def test_the_child_does_not_outlive_the_server():
    out = subprocess.run(
        [sys.executable, "-c", CHILD_OF_A_DYING_SERVER], capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 30  # a ceiling: the child looks for its parent every second
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    raise AssertionError(f"the child {pid} outlived its parent")
