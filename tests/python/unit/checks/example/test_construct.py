"""checks/example/construct.py (and snippet.py): constructing the class, or the snippet that says what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from support.checks import example, write
from torchdoctor.checks import example as E
from torchdoctor.checks import result as R


def model_file(tmp_path: Path, body: str, name: str = "net.py") -> Path:
    return write(tmp_path, name, "import torch\nimport torch.nn as nn\n\n\n" + body)


def test_constructor_with_arguments_asks_for_an_example_with_the_snippet(tmp_path: Path):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self, hidden, n_classes=3):\n        super().__init__()\n        self.f = nn.Linear(4, hidden)\n\n    def forward(self, x):\n        return self.f(x)\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    err = info.value
    assert err.kind == R.ERR_NEEDS_EXAMPLE
    assert err.message.startswith("Net.__init__ needs arguments (hidden): Torch Doctor cannot guess them.")
    assert "def torchdoctor_example():" in err.snippet and "model = Net(hidden=...)" in err.snippet
    assert 'return {"model": model, "inputs": (x,), "targets": targets}' in err.snippet


def test_model_that_needs_cuda_says_so(tmp_path: Path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 2).cuda()\n\n    def forward(self, x):\n        return self.f(x)\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_CUDA
    assert info.value.message.startswith("Net() needs CUDA, and the torch of this interpreter sees no GPU")
