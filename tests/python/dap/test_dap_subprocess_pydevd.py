"""debugpy's "incompatible copy of pydevd already imported" warning in a followed subprocess
(every torchrun rank printed it), through a real debugpy, without torch: a program starts one
child process with subprocess debugging on, and the child stops at its breakpoint as its own
child session, as a rank does.

Why debugpy (1.8.22) printed it, docs/distributed.md "Debugging the ranks": a followed subprocess
starts as ``python .../pydevd.py ... --preimport ...;debugpy._vendored.force_pydevd``; importing
``pydevd.py`` loads every pydevd plugin on ``sys.path`` (ours, through the injected PYTHONPATH),
and only then does ``force_pydevd`` take any module named ``pydev...`` whose file is outside
debugpy's folder for a second pydevd: our plugin's. Since 2026-12-07 our plugin, whose import
comes before that check, hides that one message when it names our file alone
(``runtime/pydevd_warning.py``; a warning naming another file too still shows:
``tests/python/unit/runtime/test_pydevd_warning.py``).

So the tests say: the child stops, our plugin and runtime are loaded in it, the pydevd they use
is debugpy's own (no second copy), and no such warning is printed.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator

import debugpy
import pytest

from support.dap_children import ParentClient
from support.dap_env import CHILD_PROCESS_ENV, PYBACKEND, REPO, injected_env

WARNING = "incompatible copy of pydevd already imported"
PLUGIN = PYBACKEND / "pydevd_plugins" / "extensions" / "pydevd_plugin_torchdoctor.py"
VENDORED = Path(debugpy.__file__).parent / "_vendored"

PARENT = """
    import os, subprocess, sys
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "child.py")], check=True)
    print("parent: done")
"""
CHILD = """
    import sys
    marker = "the child stops here"
    print("child: done")
"""

# Evaluated in the paused child: which files its plugin and pydevd API come from, and whether
# our runtime arranged its installers (``TORCHDOCTOR_RUNTIME=1``: the collection waits for torch).
PROBE = (
    "[getattr(sys.modules.get(n), '__file__', None) for n in "
    "('pydevd_plugins.extensions.pydevd_plugin_torchdoctor', '_pydevd_bundle.pydevd_extension_api')]"
    " + [list(sys.modules['torchdoctor.runtime.startup']._DONE)]"
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    folder = tmp_path_factory.mktemp("subprocess")
    (folder / "spawner.py").write_text(textwrap.dedent(PARENT))
    child_script = folder / "child.py"
    child_script.write_text(textwrap.dedent(CHILD))
    env = dict(injected_env(), TORCHDOCTOR_RUNTIME="1")
    with ParentClient() as parent:
        parent.launch_module("spawner", [], env, str(folder))
        child, _ = parent.next_child({str(child_script): [3]})
        stop = child.wait_stopped()
        probe = child.evaluate(PROBE, stop.frame_id)["result"]
        child.continue_(stop.thread_id)
        parent.wait_event("terminated", timeout=120)
        yield {"stop": stop, "probe": probe, "output": "".join(parent.output) + "".join(child.output)}


def test_the_child_stops_with_our_plugin_on_debugpys_own_pydevd(session: Dict[str, Any]) -> None:
    assert session["stop"].reason == "breakpoint" and session["stop"].frames[0]["line"] == 3
    probe = session["probe"]
    assert repr(str(PLUGIN)) in probe, probe  # our plugin is loaded in the child...
    api = re.search(r"'([^']*pydevd_extension_api\.py)'", probe)
    assert api and Path(api.group(1)).resolve().is_relative_to(VENDORED.resolve()), probe  # ...on debugpy's pydevd
    assert "'collect'" in probe, probe  # and our runtime arranged its installers
    assert "parent: done" in session["output"] and "child: done" in session["output"]


def test_the_child_prints_no_incompatible_pydevd_warning(session: Dict[str, Any]) -> None:
    assert WARNING not in session["output"], session["output"][-2000:]


def test_the_child_prints_no_frozen_modules_note(session: Dict[str, Any]) -> None:
    """debugpy runs the program with ``-X frozen_modules=off`` but not the children it follows, and
    each printed pydevd's four-line frozen-modules note (every torchrun rank): the extension's
    ``CHILD_PROCESS_ENV`` turns them off (3.13+) or the note off (3.11, 3.12)."""
    assert "frozen modules" not in session["output"], session["output"][-2000:]


def test_the_child_environment_here_is_the_extension_s() -> None:
    text = (REPO / "extension" / "src" / "debug" / "runtimeInjection.ts").read_text()
    block = re.search(r"CHILD_PROCESS_ENV[^=]*= \{(.*?)\};", text, re.S)
    assert block, "CHILD_PROCESS_ENV not found in runtimeInjection.ts"
    assert dict(re.findall(r"(\w+): '([^']*)'", block.group(1))) == CHILD_PROCESS_ENV
