"""Turning the watch on without touching the program: the variable, the import hook, nothing
imported early, problems reported rather than raised. Each case runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from support.anomaly import PYBACKEND
from torchdoctor.runtime.anomaly import startup as anomaly_activation
from torchdoctor.runtime.anomaly import watch as anomaly_watch

PROGRAM = textwrap.dedent("""
    import json, sys
    from torchdoctor.runtime.anomaly import startup as anomaly_activation
    active = anomaly_activation.activate()
    report = {"active": active, "torch_before": "torch" in sys.modules}
    if "--torch" in sys.argv:
        import torch
        from torchdoctor.runtime.anomaly import watch as anomaly_watch
        watch = anomaly_watch.current()
        report["installed"] = watch is not None
        report["loader_restored"] = type(torch.__spec__.loader).__name__
        x = torch.tensor([1.0, float("nan")])
        torch.nn.Identity()(torch.nn.Linear(2, 2)(x))
        report["kinds"] = [r["kind"] for r in anomaly_watch.reports()]
    report["problems"] = anomaly_activation.problems()
    report["finders"] = [type(f).__name__ for f in sys.meta_path]
    print(json.dumps(report))
""")


def run(env_value, *argv):
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    if env_value is not None:
        env["TORCHDOCTOR_ANOMALY"] = env_value
    out = subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_the_watch_arrives_with_the_programs_own_import_of_torch():
    report, stderr = run('{"mode": "log"}', "--torch")
    assert report["active"] and not report["torch_before"] and report["installed"]
    assert report["loader_restored"] == "SourceFileLoader" and "_TorchImportFinder" not in report["finders"]
    assert report["kinds"] == ["nonfinite_output"]
    assert "[torchdoctor] anomaly: NaN in the output of `Linear` (Linear) at step 0" in stderr


def test_a_program_without_torch_never_gets_it():
    report, _ = run('{"mode": "break"}')
    assert report["active"] and not report["torch_before"] and "_TorchImportFinder" in report["finders"]


@pytest.fixture
def activation():
    """In this process torch is imported already: activate() installs at once (the attach case)."""
    anomaly_activation.reset()
    yield anomaly_activation
    anomaly_watch.uninstall()
    anomaly_activation.reset()


def test_no_variable_or_mode_off_means_no_watch(activation):
    assert activation.activate({}) is False and anomaly_watch.current() is None
    assert activation.activate({"TORCHDOCTOR_ANOMALY": '{"mode": "off"}'}) is False and anomaly_watch.current() is None


def test_bad_settings_are_reported_not_raised(activation):
    assert activation.activate({"TORCHDOCTOR_ANOMALY": '{"mode": "log", "threshold": "high"}'})
    assert anomaly_watch.current().config.threshold == 1e4
    assert activation.problems() == ["threshold must be a number above 0 (got 'high'); using 10000"]
    activation.reset()
    assert activation.activate({"TORCHDOCTOR_ANOMALY": "not json"}) and "not JSON" in activation.problems()[0]
    assert activation.activate({"TORCHDOCTOR_ANOMALY": "{}"}) is False  # once per process


def test_the_pydevd_plugin_activates_it():
    """As debugpy does at start: load the plugin modules, send on_debugger_modules_loaded."""
    from pathlib import Path

    debugpy = pytest.importorskip("debugpy", reason="debugging needs debugpy, which needs Python 3.10 or later")
    pydevd_dir = Path(debugpy.__file__).parent / "_vendored" / "pydevd"
    code = textwrap.dedent("""
        import json, sys
        from _pydevd_bundle import pydevd_extension_utils
        from _pydevd_bundle.pydevd_extension_api import DebuggerEventHandler
        for handler in pydevd_extension_utils.extensions_of_type(DebuggerEventHandler):
            handler.on_debugger_modules_loaded(debugger_version="test")
        before = "torch" in sys.modules
        import torch
        from torchdoctor.runtime.anomaly import watch as anomaly_watch
        print(json.dumps({"before": before, "installed": anomaly_watch.current() is not None}))
    """)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(PYBACKEND), str(pydevd_dir)]),
        OMP_NUM_THREADS="1",
        TORCHDOCTOR_ANOMALY='{"mode": "break"}',
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"before": False, "installed": True}
