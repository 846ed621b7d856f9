"""``torchdoctor check``: text, JSON, CSV and exit status 0 / 1 / 2, with real workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.checks import MODELS, ROOT, write
from torchdoctor.cli import main


def test_pass_prints_the_verdict_first_and_exits_0(capsys):
    assert main(["check", "shapes", f"{MODELS / 'cnn.py'}::TinyCNN"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS  Shape trace on TinyCNN")
    assert "conv1  Conv2d" in out and "What Torch Doctor assumed:" in out


def test_fail_exits_1_and_explains(capsys):
    assert main(["check", "shapes", str(MODELS / "shape_mismatch.py")]) == 1  # the only class: no ::Name needed
    out = capsys.readouterr().out
    assert out.startswith("FAIL  Shape trace on LeNetish")
    assert "flatten-size mistake" in out
    assert "!!  fc1" in out


def test_json_is_the_view_model(capsys):
    assert main(["check", "gradcheck", f"{MODELS / 'custom_autograd.py'}::SwishNet", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == "FAIL" and result["details"]["failingParameters"] == ["act.beta"]


def test_lr_find_writes_the_csv(tmp_path: Path, capsys):
    csv_path = tmp_path / "sweep.csv"
    assert (
        main(
            [
                "check",
                "lr-find",
                f"{MODELS / 'mlp.py'}::TinyMLP",
                "--csv",
                str(csv_path),
                "--options",
                '{"numIter": 40}',
            ]
        )
        == 0
    )
    assert csv_path.read_text().splitlines()[0] == "step,lr,loss,smoothed_loss"
    assert f"CSV written to {csv_path}" in capsys.readouterr().out


def test_constructor_arguments_exit_2_with_the_snippet(tmp_path: Path, capsys):
    path = write(
        tmp_path,
        "args.py",
        "import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self, width):\n        super().__init__()\n        self.fc = nn.Linear(3, width)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    )
    assert main(["check", "overfit", f"{path}::Net"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("ERROR Overfit test on Net")
    assert "Net.__init__ needs arguments (width)" in out
    assert "    def torchdoctor_example():" in out and "model = Net(width=...)" in out


def test_usage_errors_exit_2_without_starting_a_worker(tmp_path: Path, capsys):
    assert main(["check", "overfit", f"{MODELS / 'mlp.py'}::TinyMLP", "--csv", "x.csv"]) == 2
    assert "--csv applies to lr-find only" in capsys.readouterr().err
    assert main(["check", "overfit", str(MODELS / "custom_autograd.py")]) == 2
    assert "nn.Module classes in the file: LearnableSwish, SwishNet" in capsys.readouterr().err
    assert main(["check", "overfit", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = write(tmp_path, "bad.py", "class A(:\n")
    assert main(["check", "overfit", str(bad)]) == 2
    assert "syntax error at line 1" in capsys.readouterr().err


def test_a_package_module_runs_from_the_current_folder_with_pythonpath(tmp_path: Path, capsys, monkeypatch):
    # minGPT's layout (pkg/model.py imports pkg.utils), a helper outside the project, a data file
    # opened relative to the project folder, as the editor runs it in the workspace folder
    project, lib = tmp_path / "proj", tmp_path / "lib"
    (project / "pkg").mkdir(parents=True)
    (project / "data").mkdir()
    lib.mkdir()
    (project / "data" / "width.txt").write_text("6")
    write(project / "pkg", "__init__.py", "")
    write(project / "pkg", "utils.py", "IN = 4\n")
    write(lib, "helpers.py", "def width():\n    return int(open('data/width.txt').read())\n")
    model = write(
        project / "pkg",
        "model.py",
        "import torch.nn as nn\nfrom pkg.utils import IN\nimport helpers\n\nWIDTH = helpers.width()\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(IN, WIDTH)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n",
    )
    monkeypatch.chdir(project)
    monkeypatch.setenv("PYTHONPATH", "")
    assert main(["check", "shapes", "pkg/model.py", "--pythonpath", str(lib)]) == 0, capsys.readouterr()
    assert "(8, 4) -> (8, 6)" in capsys.readouterr().out
    monkeypatch.setenv("PYTHONPATH", "")
    assert main(["check", "shapes", str(model)]) == 2  # without the helper's folder
    assert "No module named 'helpers'" in capsys.readouterr().out


def test_cwd_and_pythonpath_must_be_folders(tmp_path: Path, capsys):
    assert main(["check", "shapes", str(MODELS / "mlp.py"), "--cwd", str(tmp_path / "nope")]) == 2
    assert "--cwd" in capsys.readouterr().err
    assert main(["check", "shapes", str(MODELS / "mlp.py"), "--pythonpath", str(tmp_path / "nope")]) == 2
    assert "--pythonpath: no such folder" in capsys.readouterr().err


def test_interpreter_without_torch_exits_2(no_torch_python: str, capsys):
    assert main(["check", "shapes", f"{MODELS / 'mlp.py'}::TinyMLP", "--python", no_torch_python]) == 2
    assert f"torch is not installed in {no_torch_python}" in capsys.readouterr().out


def test_the_installed_command(tmp_path: Path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchdoctor",
            "check",
            "overfit",
            f"{MODELS / 'ctor_args.py'}::ConfigurableMLP",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={"PYTHONPATH": str(ROOT / "pybackend"), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["verdict"] == "PASS" and result["example"]["source"] == "torchdoctor_example"
