"""``torchdoctor lint`` output: one line per finding, a closed pipe is not an error, and a file
written for a newer Python says which interpreter parsed it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchdoctor.cli import main
from torchdoctor.lint import lint_source
from torchdoctor.lint.cli import _as_text
from torchdoctor.lint.model import WARNING, Finding, Span

PYBACKEND = Path(__file__).resolve().parents[4] / "pybackend"
PYENV = Path.home() / ".pyenv" / "versions"


def test_a_message_quoting_several_source_lines_stays_on_one_line():
    finding = Finding(
        "TD010", WARNING, "`model.eval(\n    )` is never undone:\tcall  `model.train()`", Span(3, 4, 4, 5)
    )
    lines = _as_text([("train.py", [finding])]).splitlines()
    assert lines[0] == "train.py:4:5: TD010 warning: `model.eval( )` is never undone: call `model.train()`"
    assert len(lines) == 2  # the finding and the summary


def test_every_text_line_but_the_summary_is_a_finding(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch.nn as nn\n"
        "for epoch in range(3):\n"
        "    for x, y in loader:\n"
        "        opt.zero_grad()\n"
        "        loss = nn.functional.cross_entropy(model(x), y)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "    model.eval(\n"
        "    )\n"
    )
    main(["lint", str(script)])
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith(f"{script}:") for line in lines[:-1]), lines
    assert lines[-1].startswith("Found ")


def test_a_closed_pipe_prints_no_traceback(tmp_path):
    script = tmp_path / "many.py"
    script.write_text("import torch\n" + "".join(f"w{i} = torch.load('w{i}.pt')\n" for i in range(3000)))
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND))
    lint = subprocess.Popen(
        [sys.executable, "-m", "torchdoctor", "lint", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    lint.stdout.readline()
    lint.stdout.close()  # what ``| head -1`` does
    err = lint.stderr.read().decode()
    lint.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


NEWER = {
    "type Batch = list[int]\n": ((3, 12), "`type` alias"),
    "def first[T](xs):\n    return xs[0]\n": ((3, 12), "generic function"),
    "class Box[T]:\n    pass\n": ((3, 12), "generic class"),
    'names = {"a": 1}\nprint(f"{names["a"]}")\n': ((3, 12), "f-string"),
    "try:\n    pass\nexcept* ValueError:\n    pass\n": ((3, 11), "except*"),
}


@pytest.mark.parametrize("text", list(NEWER), ids=[v[1] for v in NEWER.values()])
def test_newer_syntax_names_the_interpreter_and_the_version_needed(text):
    (major, minor), what = NEWER[text]
    result = lint_source(text)
    if sys.version_info[:2] >= (major, minor):
        assert result.syntax_error is None
        return
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    message = result.syntax_error.message
    assert f"your interpreter is {here}; this file uses syntax from Python {major}.{minor} or newer" in message
    assert what in message


def test_an_ordinary_syntax_error_does_not_blame_the_interpreter():
    result = lint_source("for x in y print(x)\n")
    assert "interpreter" not in result.syntax_error.message


@pytest.mark.parametrize("version", ["3.11", "3.12"])
def test_under_pyenv_interpreters(version, tmp_path):
    found = sorted(PYENV.glob(f"{version}.*/bin/python")) if PYENV.is_dir() else []
    if not found:
        pytest.skip(f"no pyenv Python {version}")
    script = tmp_path / "aliases.py"
    script.write_text("import torch\n\ntype Batch = list[torch.Tensor]\n")
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND))
    run = subprocess.run(
        [str(found[-1]), "-m", "torchdoctor", "lint", str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    if version == "3.11":
        assert run.returncode == 1
        assert (
            "TD000 error: syntax error: invalid syntax (your interpreter is 3.11; this file uses syntax from "
            "Python 3.12 or newer: a `type` alias statement)"
        ) in run.stdout
    else:
        assert run.returncode == 0, run.stdout + run.stderr
