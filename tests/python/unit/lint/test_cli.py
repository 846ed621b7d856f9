"""``torchdoctor lint``: output formats, exit statuses, directory walking."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchdoctor.cli import main

CORPUS = Path(__file__).resolve().parents[2] / "lint_corpus"
BUGGY_FILE = CORPUS / "buggy" / "td001_missing_zero_grad.py"


def test_findings_exit_1_with_text_lines(capsys):
    assert main(["lint", str(BUGGY_FILE)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{BUGGY_FILE}:18:5: TD001 warning: `optimizer` is stepped")
    assert out[-1] == "Found 1 problem in 1 file, 1 with a quick fix in the editor."


def test_clean_directory_exits_0(capsys):
    assert main(["lint", str(CORPUS / "clean")]) == 0
    assert capsys.readouterr().out.startswith("No problems found in ")


def test_json_format(capsys):
    assert main(["lint", "--format", "json", str(BUGGY_FILE)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"files": 1, "findings": 1}
    (finding,) = data["files"][0]["findings"]
    assert finding["id"] == "TD001" and finding["line"] == 18 and finding["fix"]["edits"]


def test_directories_recurse_and_skip_hidden_ones(tmp_path, capsys):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / ".venv").mkdir()
    (tmp_path / "pkg" / "sub" / "train.py").write_text(BUGGY_FILE.read_text())
    (tmp_path / "pkg" / "notes.txt").write_text("optimizer.step()")
    (tmp_path / ".venv" / "lib.py").write_text(BUGGY_FILE.read_text())
    assert main(["lint", "--format", "json", str(tmp_path)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [Path(f["path"]).name for f in data["files"]] == ["train.py"]
    assert data["summary"]["files"] == 1


def test_syntax_error_is_reported_not_raised(tmp_path, capsys):
    bad = tmp_path / "broken.py"
    bad.write_text("for x in range(3)\n    print(x)\n")
    good = tmp_path / "ok.py"
    good.write_text("print('fine')\n")
    assert main(["lint", str(bad), str(good)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1:" in out and "TD000 error: syntax error" in out


def test_undecodable_file_is_reported(tmp_path, capsys):
    bad = tmp_path / "latin.py"
    bad.write_bytes(b"x = '\xe9'\n")
    assert main(["lint", str(bad)]) == 1
    assert "cannot read file" in capsys.readouterr().out


def test_disable_option(capsys):
    assert main(["lint", "--disable", "TD001,TD003", str(BUGGY_FILE)]) == 0


@pytest.mark.parametrize("argv", [["lint", "no/such/file.py"], ["lint", "--disable", "TD999", str(BUGGY_FILE)]])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "torchdoctor lint:" in capsys.readouterr().err


def test_missing_paths_and_bad_format_exit_2():
    for argv in (["lint"], ["lint", "--format", "xml", str(BUGGY_FILE)]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2


def test_real_entry_point():
    run = subprocess.run([sys.executable, "-m", "torchdoctor", "lint", str(BUGGY_FILE)], capture_output=True, text=True)
    assert run.returncode == 1 and "TD001" in run.stdout


def test_the_command_line_loads_no_asyncio_before_a_check_needs_it():
    """Every ``torchdoctor`` command (``lint`` on a small file most of all) pays for what building
    the parser imports: asyncio cost ~25 ms of it, and only ``check`` runs an event loop."""
    from support.paths import PYBACKEND

    code = "import sys, torchdoctor.cli\nsys.exit(1 if 'asyncio' in sys.modules else 0)\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(PYBACKEND), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
