"""checks/example/load.py: the user's file as a module, its errors in the user's words."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support.checks import MODELS, write
from torchdoctor.checks import example as E
from torchdoctor.checks import result as R


def test_syntax_error_says_line_and_column(tmp_path: Path):
    path = write(tmp_path, "bad.py", "import torch\n\nx = (1,\ny = 2\n")
    with pytest.raises(E.ExampleError) as info:
        E.load_user_module(str(path))
    assert info.value.kind == R.ERR_SYNTAX
    # Python 3.10+ names the unclosed "(" (line 3); 3.9's parser, the line where it gave up (4)
    line = 3 if sys.version_info >= (3, 10) else 4
    assert f"bad.py has a syntax error at line {line}" in info.value.message


def test_import_error_keeps_the_users_traceback(tmp_path: Path):
    path = write(tmp_path, "boom.py", "import torch\n\ndef helper():\n    raise KeyError('config')\n\nhelper()\n")
    with pytest.raises(E.ExampleError) as info:
        E.load_user_module(str(path))
    assert info.value.kind == R.ERR_IMPORT
    assert info.value.message == "importing boom.py raised KeyError: 'config'"
    assert 'boom.py", line 4, in helper' in info.value.detail
    assert "torchdoctor/checks/" not in info.value.detail.replace("\\", "/")  # no worker frames above the user's


def test_unknown_class_lists_the_ones_there():
    module = E.load_user_module(str(MODELS / "custom_autograd.py"))
    with pytest.raises(E.ExampleError) as info:
        E.find_class(module, "Nope")
    assert info.value.kind == R.ERR_NO_CLASS and "LearnableSwish, SwishNet" in info.value.message


def test_a_package_module_is_imported_by_its_dotted_name(tmp_path: Path):
    # minGPT's layout: mingpt/model.py imports mingpt.utils; a sibling example imports the class
    # through the package and must get the same class object
    (tmp_path / "pkg").mkdir()
    write(tmp_path / "pkg", "__init__.py", "")
    write(tmp_path / "pkg", "utils.py", "class CfgNode:\n    n_embd = 8\n")
    write(
        tmp_path / "pkg",
        "model.py",
        "import torch.nn as nn\nfrom pkg.utils import CfgNode\nfrom .utils import CfgNode as Same\n\n"
        "class GPT(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(CfgNode.n_embd, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    )
    write(
        tmp_path / "pkg",
        "torchdoctor_example.py",
        "import torch\nfrom pkg.model import GPT\n\ndef torchdoctor_example():\n"
        "    return GPT(), (torch.randn(4, 8), torch.randint(0, 2, (4,)))\n",
    )
    assert E.load.module_name_and_root(str(tmp_path / "pkg" / "model.py")) == ("pkg.model", str(tmp_path))
    module = E.load_user_module(str(tmp_path / "pkg" / "model.py"))
    assert module.__name__ == "pkg.model" and module.Same is module.CfgNode
    ex = E.build(module, "GPT", {})
    assert ex.source == "torchdoctor_example"  # the sibling's GPT is the very class we looked for


def test_a_module_level_argparse_sees_a_clean_argv_and_its_exit_is_explained(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("sys.argv", ["worker", "--check", "overfit", "--file", "x.py"])
    ok = write(
        tmp_path,
        "script_ok.py",
        "import argparse\nimport sys\np = argparse.ArgumentParser()\np.add_argument('--lr', type=float, default=0.1)\n"
        "args = p.parse_args()\nSEEN = list(sys.argv)\n",
    )
    module = E.load_user_module(str(ok))
    assert module.args.lr == 0.1 and module.SEEN == [str(ok)]
    bad = write(
        tmp_path,
        "script_required.py",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--dataset', required=True)\nopt = p.parse_args()\n",
    )
    with pytest.raises(E.ExampleError) as info:
        E.load_user_module(str(bad))
    message = info.value.message
    assert info.value.kind == R.ERR_IMPORT
    assert message.startswith("importing script_required.py exited (SystemExit 2)")
    assert "the following arguments are required: --dataset" in message
    assert 'if __name__ == "__main__":' in message
    import sys

    assert sys.argv == ["worker", "--check", "overfit", "--file", "x.py"]  # put back


def test_a_traceback_from_unsaved_text_quotes_the_unsaved_line(tmp_path: Path):
    path = write(tmp_path, "edited.py", "import torch\n\nx = 1\n")  # what is on disk
    unsaved = "import torch\n\nvalue = {}['missing key in the editor']\n"
    with pytest.raises(E.ExampleError) as info:
        E.load_user_module(str(path), unsaved)
    assert "value = {}['missing key in the editor']" in info.value.detail
    assert "x = 1" not in info.value.detail


@pytest.mark.parametrize(
    "encoded",
    [
        "\ufeffNAME = 'café'\n".encode("utf-8"),  # a UTF-8 byte-order mark
        "# -*- coding: latin-1 -*-\nNAME = 'café'\n".encode("latin-1"),  # PEP 263
    ],
    ids=["bom", "latin-1"],
)
def test_a_file_read_from_disk_is_decoded_as_python_decodes_it(tmp_path: Path, encoded: bytes):
    # issue 16.7: the data-check worker imports unopened files from disk; open(encoding="utf-8")
    # failed on a latin-1 file and kept the BOM, although Python runs both.
    path = tmp_path / "coded_module.py"
    path.write_bytes(encoded)
    module = E.load_user_module(str(path))
    assert module.NAME == "café"


def test_a_file_that_is_not_a_regular_file_is_a_usage_error(tmp_path: Path):
    with pytest.raises(E.ExampleError) as info:
        E.load_user_module(str(tmp_path))  # a folder
    assert info.value.kind == R.ERR_USAGE and "not a regular file" in info.value.message
