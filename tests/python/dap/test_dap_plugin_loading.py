"""The plugin module as pydevd loads it: cheap to import, torch-free, registered, choosy.

Runs in a fresh interpreter with debugpy's vendored pydevd on sys.path (as inside a debuggee),
so that what is imported, and when, is observable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import debugpy

from support.dap_env import PYBACKEND

PYDEVD = Path(debugpy.__file__).parent / "_vendored" / "pydevd"

SCRIPT = textwrap.dedent("""
    import json, sys
    from _pydevd_bundle import pydevd_extension_utils
    from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider
    before = set(sys.modules)
    str_providers = pydevd_extension_utils.extensions_of_type(StrPresentationProvider)
    resolvers = pydevd_extension_utils.extensions_of_type(TypeResolveProvider)
    ours = [p for p in str_providers if type(p).__name__ == "TorchDoctorStrProvider"]
    resolver = [r for r in resolvers if type(r).__name__ == "TorchDoctorTensorResolver"]
    report = {
        "plugin_loaded": "pydevd_plugins.extensions.pydevd_plugin_torchdoctor" in sys.modules,
        "torch_after_plugin_import": "torch" in sys.modules,
        "numpy_after_plugin_import": "numpy" in sys.modules,
        "registered": [len(ours), len(resolver)],
        "list_without_torch": ours[0].can_provide(list, "list"),
        "list_str_without_torch": ours[0].get_str_in_context([1, 2], "hover"),
        "torch_after_list": "torch" in sys.modules,
    }
    import torch
    p = ours[0]
    report["can_provide"] = {name: p.can_provide(cls, cls.__name__) for name, cls in [
        ("Tensor", torch.Tensor), ("Parameter", torch.nn.Parameter), ("Linear", torch.nn.Linear),
        ("Size", torch.Size), ("int", int), ("str", str), ("dict", dict)]}
    report["resolver_for"] = {name: resolver[0].can_provide(cls, cls.__name__) for name, cls in [
        ("Tensor", torch.Tensor), ("Parameter", torch.nn.Parameter), ("Linear", torch.nn.Linear), ("list", list)]}
    t = torch.tensor([1.0, float("nan")])
    report["hover"] = p.get_str_in_context(t, "hover")
    report["variables"] = p.get_str(t)
    report["clipboard"] = p.get_str_in_context(t, "clipboard")
    report["children"] = [name for name, _, _ in resolver[0].get_contents_debug_adapter_protocol(t)]
    report["plain_dict"] = p.get_str_in_context({"a": 1}, "hover")
    print(json.dumps(report))
""")


def test_plugin_registers_and_never_imports_torch_on_its_own():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYBACKEND), str(PYDEVD)]))
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["plugin_loaded"] and report["registered"] == [1, 1]
    assert not report["torch_after_plugin_import"] and not report["numpy_after_plugin_import"]
    assert report["list_without_torch"] is True and report["list_str_without_torch"] is None
    assert not report["torch_after_list"]
    assert report["can_provide"] == {
        "Tensor": True,
        "Parameter": True,
        "Linear": True,
        "Size": False,
        "int": False,
        "str": False,
        "dict": True,
    }
    assert report["resolver_for"] == {"Tensor": True, "Parameter": True, "Linear": True, "list": False}
    assert report["hover"] == report["variables"] == "tensor[2] f32 cpu 8 B ⚠ NaN×1 x=[1, NaN]"
    assert report["clipboard"] == report["hover"] + "\ntensor([1., nan])"
    assert report["children"][:3] == ["shape", "dtype", "device"]
    assert report["plain_dict"] is None
