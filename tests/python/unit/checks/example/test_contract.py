"""checks/example/contract.py: the user's torchdoctor_example() wins when it builds the class."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.checks import MODELS, example, write
from torchdoctor.checks import example as E
from torchdoctor.checks import result as R


def model_file(tmp_path: Path, body: str, name: str = "net.py") -> Path:
    return write(tmp_path, name, "import torch\nimport torch.nn as nn\n\n\n" + body)


def test_user_example_in_the_file_wins():
    ex = example(MODELS / "ctor_args.py", "ConfigurableMLP")
    assert ex.source == "torchdoctor_example"
    assert tuple(ex.inputs[0].shape) == (8, 12)
    assert ex.inferred[0] == "Model and batch from torchdoctor_example() in ctor_args.py."


def test_user_example_in_a_sibling_file_gets_the_same_class(tmp_path: Path):
    model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self, k):\n        super().__init__()\n        self.f = nn.Linear(k, 2)\n\n    def forward(self, x):\n        return self.f(x)\n",
        name="mynet.py",
    )
    write(
        tmp_path,
        "torchdoctor_example.py",
        """
        import torch
        from mynet import Net

        def torchdoctor_example(class_name):
            assert class_name == "Net"
            return Net(5), (torch.randn(4, 5), None)
        """,
    )
    ex = example(tmp_path / "mynet.py", "Net")
    assert ex.source == "torchdoctor_example" and "torchdoctor_example.py" in ex.inferred[0]
    assert ex.loss_name == "cross-entropy"  # targets None: inferred from the (4, 2) output


def test_user_example_with_a_loss_function(tmp_path: Path):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 2)\n\n    def forward(self, x):\n        return self.f(x)\n\n\n"
        "def torchdoctor_example():\n    return Net(), (torch.randn(4, 3), torch.randn(4, 2)), nn.SmoothL1Loss()\n",
    )
    ex = example(path, "Net")
    assert ex.loss_name == "custom"
    assert float(ex.loss(ex.output()).detach()) >= 0


@pytest.mark.parametrize(
    "returned, words",
    [
        ("Net()", "must return a dict {'model', 'inputs', 'kwargs', 'targets', 'loss'}"),
        ("(Net(), torch.randn(2, 3))", "second item must be the pair (inputs, targets)"),
        ("('model', (torch.randn(2, 3), None))", "not an nn.Module"),
        ("(Net(), ([1, 2], None))", "the inputs hold no tensor"),
    ],
)
def test_a_wrong_user_example_is_explained(tmp_path: Path, returned: str, words: str):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 2)\n\n    def forward(self, x):\n        return self.f(x)\n\n\n"
        f"def torchdoctor_example():\n    return {returned}\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_BAD_EXAMPLE and words in info.value.message
