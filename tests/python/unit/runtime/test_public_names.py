"""Module paths that live outside this repository's code keep working after the runtime moved.

Users' saved anomaly breakpoints call ``torchdoctor.runtime.conditions``; the extension evaluates
``torchdoctor.runtime.snapshot.dump(...)`` in the paused program; older docs told users to watch
``torchdoctor.runtime.anomaly_watch.last_report()``; the pydevd plugin (and any copy of it on a
user's PYTHONPATH) imports ``runtime.activation``, ``runtime.children``, ``runtime.kinds`` and
``runtime.summary``; programs call ``torchdoctor.summarize`` / ``torchdoctor.stats``. Each old
path is a one-line re-export of the new module's functions: the very same objects.
"""

from __future__ import annotations

import importlib
import re

import pytest

from support.paths import REPO

# old module -> (new module, names users or the extension reach through the old one)
KEPT = {
    "torchdoctor.runtime.conditions": (
        "torchdoctor.runtime.anomaly.conditions",
        ["any_nonfinite", "exceeds", "loss_spiked", "grad_norm_exceeds", "last_error"],
    ),
    "torchdoctor.runtime.snapshot": (
        "torchdoctor.runtime.collect.snapshot",
        ["dump", "build", "status_line", "SCHEMA", "VERSION"],
    ),
    "torchdoctor.runtime.anomaly_watch": ("torchdoctor.runtime.anomaly.watch", ["last_report"]),
    "torchdoctor.runtime.activation": (
        "torchdoctor.runtime.startup",
        ["activate", "when_torch_imported", "forget", "problems", "reset"],
    ),
    "torchdoctor.runtime.children": ("torchdoctor.runtime.summary.children", ["tensor_children"]),
    "torchdoctor.runtime.kinds": ("torchdoctor.runtime.summary.kinds", ["is_plain_container", "classify"]),
    "torchdoctor.runtime.summary": ("torchdoctor.runtime.summary.api", ["summarize", "stats", "summarize_if_ours"]),
}


@pytest.mark.parametrize("old", sorted(KEPT))
def test_old_module_paths_re_export_the_same_functions(old: str):
    new, names = KEPT[old]
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), f"{old}.{name}"


def test_top_level_summarize_and_stats():
    import torchdoctor
    from torchdoctor.runtime.summary import api

    assert torchdoctor.summarize is api.summarize and torchdoctor.stats is api.stats
    assert importlib.import_module("torchdoctor.runtime").summarize is api.summarize


def test_every_runtime_path_the_extension_names_is_kept():
    """The extension's sources spell these module paths in expressions it sends to the debuggee."""
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "extension" / "src").rglob("*.ts"))
    named = set(re.findall(r"torchdoctor\.runtime\.([a-z_]+)", sources))
    assert {"conditions", "snapshot"} <= named
    for name in named:
        importlib.import_module(f"torchdoctor.runtime.{name}")


def test_every_runtime_module_the_pydevd_plugin_imports_is_kept():
    plugin = (REPO / "pybackend" / "pydevd_plugins" / "extensions" / "pydevd_plugin_torchdoctor.py").read_text(
        encoding="utf-8"
    )
    imported = re.findall(r"from torchdoctor\.runtime(\.[a-z_.]+)? import ([a-z_, ]+)", plugin)
    assert imported
    for package, names in imported:
        for name in names.split(","):
            importlib.import_module(f"torchdoctor.runtime{package}.{name.strip()}")
