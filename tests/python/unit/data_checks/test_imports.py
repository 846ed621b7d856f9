"""The backend side of the data checks (what the CLI imports) loads neither numpy nor torch."""

from __future__ import annotations

import subprocess
import sys

from support.paths import PYBACKEND

BACKEND_SIDE = ("cli", "jobs", "report", "findings", "thresholds", "ended", "watch", "loader_errors")


def test_the_cli_side_imports_no_numpy_or_torch_in_a_fresh_process():
    code = (
        "import sys\n"
        + "".join(f"import torchdoctor.data_checks.{m}\n" for m in BACKEND_SIDE)
        + "import torchdoctor.cli\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy'))\n"
        "print(bad)\nsys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(PYBACKEND), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_data_checks_import_no_server_lint_or_diagnosis():
    root = PYBACKEND / "torchdoctor" / "data_checks"
    texts = {p.name: p.read_text() for p in root.glob("*.py")}
    assert len(texts) > 15
    for name, text in texts.items():
        for banned in ("server", "lint", "diagnosis"):
            assert f"from ..{banned}" not in text and f"torchdoctor.{banned}" not in text, (name, banned)
