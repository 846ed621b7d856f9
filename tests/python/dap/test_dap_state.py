"""Looking is free: after Variables, expansion and every evaluate context, the debuggee's RNG
states, versions, grads and autograd graph are as they were — asserted inside the debuggee."""

from __future__ import annotations

import textwrap

import pytest

from support.dap_client import DAPClient
from support.dap_env import SAMPLES, injected_env, marked_line

pytestmark = pytest.mark.timeout(600)  # a ceiling for a loaded machine, not an expectation

PROGRAM = SAMPLES / "inspect_tensors.py"
LINE = marked_line(PROGRAM, "# Set a breakpoint here")

# Evaluated in the paused frame: a plain-string fingerprint of everything a look could disturb.
SNAPSHOT = (
    "repr(("
    "__import__('hashlib').sha1(repr(__import__('random').getstate()).encode()).hexdigest(),"
    "__import__('hashlib').sha1(np.random.get_state()[1].tobytes()).hexdigest(),"
    "__import__('hashlib').sha1(bytes(torch.get_rng_state().tolist())).hexdigest(),"
    "images._version, broken._version, weight._version, labels._version, half._version,"
    "weight.grad._version, float(weight.grad.double().sum()), loss.grad_fn.name(), logits.grad_fn.name(),"
    "torch.is_grad_enabled(), sparse.is_coalesced(), float(broken.nan_to_num().sum()),"
    "float(images.double().sum()), float(scores.sum()), model.training,"
    "))"
)


def _look_everywhere(dap: DAPClient, frame_id: int) -> int:
    """What the UI does at a stop: list, expand each variable (the Parameter two levels deep, so
    its grad and values too), evaluate in every context. Each request is a ~40 ms round trip."""
    looked = 0
    for name, variable in dap.frame_locals(frame_id).items():
        children = dap.children(variable)
        looked += len(children)
        if name == "weight":
            for child in children.values():
                dap.children(child)
        for context in ("hover", "watch", "repl", "clipboard"):
            dap.evaluate(name, frame_id, context)
    return looked


def test_debuggee_state_is_unchanged_by_looking():
    with DAPClient() as dap:
        stop = dap.launch_and_stop(str(PROGRAM), [LINE], env=injected_env())
        before = dap.evaluate(SNAPSHOT, stop.frame_id, "repl")["result"]
        assert _look_everywhere(dap, stop.frame_id) > 50
        after = dap.evaluate(SNAPSHOT, stop.frame_id, "repl")["result"]
        assert after == before
        # The program goes on to the end normally.
        dap.continue_(stop.thread_id)
        assert dap.wait_exited() == 0
        assert "loss = " in dap.output_text()


def test_plugin_does_not_import_torch_into_a_program_without_it(tmp_path):
    program = tmp_path / "no_torch.py"
    program.write_text(
        textwrap.dedent("""
        import sys
        numbers = [1, 2, 3]
        table = {"a": [1.0, 2.0], "b": (3, 4)}
        print("done")  # stop here
    """)
    )
    with DAPClient() as dap:
        stop = dap.launch_and_stop(
            str(program), [marked_line(program, "# stop here")], env=injected_env(), just_my_code=False
        )
        values = {name: var["value"] for name, var in dap.frame_locals(stop.frame_id).items()}
        assert values["numbers"] == "[1, 2, 3]" and values["table"].startswith("{'a': [1.0, 2.0]")
        assert dap.evaluate("numbers", stop.frame_id, "hover")["result"] == "[1, 2, 3]"
        loaded = dap.evaluate(
            "sorted(m for m in sys.modules if 'torchdoctor' in m or m in ('torch', 'numpy'))", stop.frame_id, "repl"
        )["result"]
        assert "pydevd_plugins.extensions.pydevd_plugin_torchdoctor" in loaded  # the plugin is there...
        assert "'torch'" not in loaded and "'numpy'" not in loaded  # ...and pulled in neither library
