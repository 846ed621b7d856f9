"""Through a real debugpy: the launch the ``"torchrun"`` attribute makes (``python -m
torch.distributed.run --nproc-per-node 2 --standalone script``, subprocess debugging on) gives one
child session per rank, as VS Code opens them (``startDebugging``); a breakpoint stops both
ranks, each rank's process carries its ``RANK`` (what names the session ``rank K``), tensor
summaries work in each, and continuing both lets the job finish.

The arguments are those extension/src/debug/torchrunConfig.ts builds (its unit test pins them).
"""

from __future__ import annotations

import pytest

from support.dap_children import ParentClient
from support.dap_env import SAMPLES, injected_env, marked_line

SCRIPT = SAMPLES / "distributed" / "ddp_train.py"
MARKER = "a breakpoint here stops every rank"

pytestmark = pytest.mark.timeout(900)  # a ceiling: torchrun, then 2 ranks importing torch under debugpy


def _rank_of(pid: int) -> str:
    """RANK from the process's own environment, as the extension reads it to name the session."""
    with open(f"/proc/{pid}/environ", "rb") as env:
        entries = env.read().split(b"\0")
    return next(e.decode()[len("RANK=") :] for e in entries if e.startswith(b"RANK="))


def test_each_rank_is_a_child_session_that_stops_at_the_breakpoint() -> None:
    line = marked_line(SCRIPT, MARKER)
    env = dict(injected_env(), TORCHDOCTOR_RUNTIME="1", OMP_NUM_THREADS="1")
    with ParentClient() as parent:
        parent.launch_module(
            "torch.distributed.run", ["--nproc-per-node", "2", "--standalone", str(SCRIPT)], env, str(SAMPLES)
        )
        ranks, stops, children = set(), [], []
        while len(ranks) < 2:
            child, configuration = parent.next_child({str(SCRIPT): [line]})
            try:
                ranks.add(_rank_of(configuration["subProcessId"]))
            except (OSError, StopIteration):
                child.close()  # a subprocess that is not a rank (none expected, but not ours to fail on)
                continue
            children.append(child)
        for child in children:
            stops.append(child.wait_stopped())
        assert ranks == {"0", "1"}
        for child, stop in zip(children, stops):
            assert stop.reason == "breakpoint" and stop.frames[0]["line"] == line
            loss = child.evaluate("loss", stop.frame_id, context="hover")["result"]
            assert loss.startswith("tensor[] f32 cpu"), loss  # our summary, in every rank
        for child, stop in zip(children, stops):
            child.request("setBreakpoints", {"source": {"path": str(SCRIPT)}, "breakpoints": []})
            child.continue_(stop.thread_id)
        parent.wait_event("terminated", timeout=600)
    assert "rank 0: final loss" in parent.output_text() + "".join(c.output_text() for c in children)
