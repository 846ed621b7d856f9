"""checks/example/load.py: the user's file as a module, its errors in the user's words."""

from __future__ import annotations

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
    assert "bad.py has a syntax error at line 3" in info.value.message


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
