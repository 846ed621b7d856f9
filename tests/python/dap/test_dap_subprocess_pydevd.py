"""debugpy's "incompatible copy of pydevd already imported" warning in a followed subprocess
(every torchrun rank prints it), through a real debugpy, without torch: a program starts one
child process with subprocess debugging on, and the child stops at its breakpoint as its own
child session, as a rank does.

What is true today (debugpy 1.8.22, docs/distributed.md "Debugging the ranks"): debugpy starts a
followed subprocess as ``python .../pydevd.py ... --preimport ...;debugpy._vendored.force_pydevd``.
Importing ``pydevd.py`` loads every pydevd plugin on ``sys.path`` (ours, found through the
injected PYTHONPATH), and only then does ``force_pydevd`` run its check, which takes any module
whose name starts with ``pydev`` and whose file is outside debugpy's own folder for a second
pydevd. A plugin's module is always named ``pydevd_plugins.extensions.pydevd_plugin_*``, so the
check names our plugin's file. The launched process itself does not warn (there
``force_pydevd`` runs before pydevd is imported). An empty plugin of any other package does the
same (debugpy issue #1910).

So the tests say: the child stops, our plugin and runtime are loaded in it, the pydevd they use
is debugpy's own (no second copy), and the warning, when printed, names our plugin's file and
nothing else. The test that the warning is absent is an expected failure, strict: the day
debugpy stops printing it, it passes, and the suite says so (then update the doc and drop the
xfail).
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator

import debugpy
import pytest

from support.dap_children import ParentClient
from support.dap_env import PYBACKEND, injected_env

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


def test_the_warning_names_our_plugin_file_and_nothing_else(session: Dict[str, Any]) -> None:
    lines = session["output"].splitlines()
    for index, line in enumerate(lines):
        if WARNING in line:
            named = lines[index + 1].strip()
            assert os.path.samefile(named, PLUGIN), lines[index : index + 3]
            assert "warnings.warn" in lines[index + 2], lines[index : index + 3]  # one file: the list ends


@pytest.mark.xfail(
    strict=True,
    reason="debugpy 1.8.22 warns in every followed subprocess when any pydevd plugin is on sys.path "
    "(debugpy issue #1910; docs/distributed.md)",
)
def test_the_child_prints_no_incompatible_pydevd_warning(session: Dict[str, Any]) -> None:
    assert WARNING not in session["output"], session["output"][-2000:]
