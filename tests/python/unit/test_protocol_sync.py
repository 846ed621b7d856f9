"""The two protocol modules (TypeScript and Python) name the same custom methods."""

from __future__ import annotations

import re
from pathlib import Path

from torchdoctor.server import protocol

ROOT = Path(__file__).resolve().parents[3]
TS_PROTOCOL = ROOT / "extension" / "src" / "protocol.ts"


def _ts_constants() -> dict[str, str]:
    text = TS_PROTOCOL.read_text()
    return dict(re.findall(r"export const (\w+) = '((?:torchDoctor)[/.][\w/.]+)';", text))


def _py_constants() -> dict[str, str]:
    """Method names (torchDoctor/...) and client command ids (..._COMMAND) of protocol.py."""
    return {
        name: value
        for name, value in vars(protocol).items()
        if name.isupper()
        and isinstance(value, str)
        and (value.startswith("torchDoctor/") or (name.endswith("_COMMAND") and value.startswith("torchDoctor.")))
    }


def test_every_custom_method_has_the_same_name_on_both_sides():
    ts = _ts_constants()
    py = _py_constants()
    assert py, "no torchDoctor/* constants found in protocol.py"
    assert ts == py, (
        f"protocol.ts and protocol.py disagree: only TS {set(ts.items()) - set(py.items())}, only Python {set(py.items()) - set(ts.items())}"
    )


def test_no_other_module_spells_a_method_name():
    """DESIGN: nothing but the protocol modules spells a torchDoctor/* method as a string."""
    offenders = []
    for path in list((ROOT / "extension" / "src").rglob("*.ts")) + list(
        (ROOT / "pybackend" / "torchdoctor").rglob("*.py")
    ):
        if path.name in ("protocol.ts", "protocol.py"):
            continue
        if re.search(r"['\"]torchDoctor/\w+", path.read_text()):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
