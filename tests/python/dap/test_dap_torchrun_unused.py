"""Through a real debugpy, the torchrun launch of a DDP script whose auxiliary head gets no
gradient (``sample_workspace/distributed/ddp_unused_parameters.py``): each rank pauses on the
user's ``model(x)`` line of the next step with our sentence naming the parameters, before DDP
raises its "Expected to have finished reduction" there (``distributed/debug_rank.py``).
"""

from __future__ import annotations

import time
from typing import Any, Dict

import pytest

from support.dap_children import ParentClient
from support.dap_env import SAMPLES, injected_env

SCRIPT = SAMPLES / "distributed" / "ddp_unused_parameters.py"
FORWARD = "nn.functional.cross_entropy(model(x, with_aux=with_aux), y).backward()"

pytestmark = pytest.mark.timeout(900)  # a ceiling: torchrun, then 2 ranks importing torch under debugpy


def _first_stop_or_end(child: Any, timeout: float = 300) -> Dict[str, Any]:
    """The rank's first ``stopped`` event, or its end (so a regression fails fast, not at a timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in list(child.events):
            if message.get("event") in ("stopped", "terminated", "exited"):
                return message
        time.sleep(0.2)
    raise TimeoutError(f"no stop within {timeout}s; output: {child.output_text()}")


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(SCRIPT.read_text().splitlines(), 1) if text in line)


def test_each_rank_pauses_at_the_forward_naming_the_parameters_without_gradient() -> None:
    env = dict(injected_env(), TORCHDOCTOR_RUNTIME="1", OMP_NUM_THREADS="1")
    with ParentClient() as parent:
        parent.launch_module(
            "torch.distributed.run", ["--nproc-per-node", "2", "--standalone", str(SCRIPT)], env, str(SAMPLES)
        )
        children = [parent.next_child({})[0] for _ in range(2)]
        for child in children:
            event = _first_stop_or_end(child)
            assert event["event"] == "stopped", (event, child.output_text())
            stopped = event["body"]
            assert stopped["reason"] == "exception", stopped
            assert "got no gradient: module.aux.weight, module.aux.bias" in stopped.get("description", ""), stopped
            frames = child.stack_trace(stopped["threadId"])
            assert frames[0]["line"] == _line_of(FORWARD), frames[0]  # the user's line, not torch's
            info = child.request("exceptionInfo", {"threadId": stopped["threadId"]})
            assert "at step 0, 2 of the DDP model's 6 parameters" in info["description"], info
        console = "".join(c.output_text() for c in children)
        assert "[torchdoctor] distributed: at step 0" in console, console
