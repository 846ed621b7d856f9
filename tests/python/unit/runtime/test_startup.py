"""runtime/startup.py in fresh interpreters: the collection arrives with ``import torch``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PYBACKEND = Path(__file__).resolve().parents[4] / "pybackend"

PROBE = r"""
import json, os, sys
from torchdoctor.runtime import startup as activation
arranged = activation.activate(json.loads(sys.argv[1]))
before = "torch" in sys.modules
finders = [type(f).__name__ for f in sys.meta_path]
import torch
from torchdoctor.runtime.collect import install as collect_install
from torchdoctor.runtime.collect import snapshot
from torch.nn.modules import module as M
model = torch.nn.Linear(3, 2)
model(torch.randn(4, 3)).sum().backward()
collector = collect_install.current()
watch = None
if "anomaly" in arranged:
    from torchdoctor.runtime.anomaly import watch as anomaly_watch
    watch = anomaly_watch.current()
hooks = list(M._global_forward_hooks.values())
print(json.dumps({
    "arranged": arranged, "torch_before": before, "finder_waiting": "_TorchImportFinder" in finders,
    "finder_left": any(type(f).__name__ == "_TorchImportFinder" for f in sys.meta_path),
    "loader": type(torch.__spec__.loader).__name__, "collector": collector is not None,
    "status": snapshot.build()["status"], "problems": activation.problems(),
    "collection_first": bool(collector) and bool(hooks) and getattr(hooks[0], "__self__", None) is collector.tracer,
    "anomaly": watch is not None,
}))
"""


def _probe(env: dict, import_torch_first: bool = False) -> dict:
    code = ("import torch\n" if import_torch_first else "") + PROBE
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(env)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(PYBACKEND), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_torchdoctor_session_collects_from_the_first_import_of_torch():
    got = _probe({"TORCHDOCTOR_RUNTIME": "1"})
    assert got["arranged"] == ["collect"] and not got["torch_before"] and got["finder_waiting"]
    assert not got["finder_left"] and got["loader"] != "_CallbackLoader"  # no trace of ours left on torch
    assert got["collector"] and got["status"] == "ok" and got["problems"] == []


def test_opting_out_or_another_session_installs_nothing():
    assert _probe({"TORCHDOCTOR_RUNTIME": "1", "TORCHDOCTOR_COLLECT": "0"})["collector"] is False
    got = _probe({})
    assert got["arranged"] == [] and got["collector"] is False and not got["finder_waiting"]


def test_attached_to_a_program_that_already_imported_torch():
    got = _probe({"TORCHDOCTOR_RUNTIME": "1"}, import_torch_first=True)
    assert got["torch_before"] and not got["finder_waiting"] and got["collector"] and got["status"] == "ok"


def test_with_the_anomaly_watch_the_collection_hooks_first():
    got = _probe({"TORCHDOCTOR_RUNTIME": "1", "TORCHDOCTOR_ANOMALY": json.dumps({"mode": "log"})})
    assert got["arranged"] == ["collect", "anomaly"] and got["anomaly"] and got["collector"]
    assert got["collection_first"]  # it notes a module's output before the watch may pause there
