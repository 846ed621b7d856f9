"""checks/example/contract.py: the user's torchdoctor_example() wins when it builds the class."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

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


# ---- the dict contract (issue 14): keyword and nested inputs, own losses, losses that see every output

NET_WITH_STATE = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Linear(3, 2)

    def forward(self, x, state=None, *, scale=1.0):
        h, c = state if state is not None else (0.0, 0.0)
        return self.f(x) * scale + h + c, (h, c)
"""


def dict_example(tmp_path: Path, body: str, returned: str, class_name: str = "Net") -> E.Example:
    path = model_file(tmp_path, body + f"\n\ndef torchdoctor_example():\n    return {returned}\n")
    return example(path, class_name)


def test_dict_example_with_nested_positional_and_keyword_inputs(tmp_path: Path):
    ex = dict_example(
        tmp_path,
        NET_WITH_STATE,
        '{"model": Net(), "inputs": (torch.randn(4, 3), (torch.zeros(4, 2), torch.ones(4, 2))), '
        '"kwargs": {"scale": 2.0}, "targets": torch.randint(0, 2, (4,))}',
    )
    assert isinstance(ex.inputs[1], tuple) and ex.kwargs == {"scale": 2.0}
    out = ex.forward()
    assert torch.allclose(out[0], ex.model.f(ex.inputs[0]) * 2.0 + 1.0)  # the kwargs and the state reached forward
    assert ex.loss_name == "cross-entropy" and ex.loss_sees == "output"  # inferred from the first output tensor
    assert ex.describe()["inputShapes"] == [[4, 3], [[4, 2], [4, 2]], None]
    assert ex.describe()["inputNames"] == [None, None, "scale"]


def test_dict_example_with_keyword_inputs_only(tmp_path: Path):
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 2)\n\n    def forward(self, input_ids=None, mask=None):\n        return {'logits': self.f(input_ids) * mask}\n"
    ex = dict_example(
        tmp_path, body, '{"model": Net(), "kwargs": {"input_ids": torch.randn(4, 3), "mask": torch.ones(4, 1)}}'
    )
    assert ex.inputs == () and ex.batch_size() == 4
    assert ex.loss_name == "cross-entropy" and tuple(ex.targets.shape) == (4,)  # targets inferred from logits


def test_a_loss_in_the_dict_sees_everything_the_forward_returned_and_keeps_no_targets(tmp_path: Path):
    ex = dict_example(
        tmp_path,
        NET_WITH_STATE,
        '{"model": Net(), "inputs": (torch.randn(4, 3),), "loss": lambda out, t: out[0].pow(2).mean() + 0 * len(out[1])}',
    )
    assert ex.loss_sees == "all" and ex.loss_name == "custom" and ex.targets is None  # complete() did not replace it
    assert float(ex.loss(ex.output()).detach()) >= 0


def test_a_loss_for_one_tensor_gets_the_first_output_tensor(tmp_path: Path):
    ex = dict_example(
        tmp_path,
        NET_WITH_STATE,
        '{"model": Net(), "inputs": (torch.randn(4, 3),), "targets": torch.tensor([0, 1, 1, 0]), "loss": nn.CrossEntropyLoss()}',
    )
    assert ex.loss_sees == "output" and ex.inferred[-1].endswith("on the output tensor.")


OWN_LOSS = """
class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 10)

    def forward(self, idx, targets=None):
        logits = self.emb(idx)
        if targets is None:
            return logits[:, [-1], :], None
        return logits, nn.functional.cross_entropy(logits.reshape(-1, 10), targets.reshape(-1))
"""


def test_a_forward_with_optional_targets_gets_them_and_its_own_loss_is_used(tmp_path: Path):
    ex = dict_example(
        tmp_path,
        OWN_LOSS,
        '{"model": LM(), "inputs": (torch.randint(0, 10, (2, 5)),), "targets": torch.randint(0, 10, (2, 5))}',
        "LM",
    )
    assert ex.target_kwarg == "targets" and ex.loss_name == "model" and ex.loss_sees == "model"
    out = ex.output()
    assert ex.loss(out) is out[1] and tuple(ex.prediction(out).shape) == (2, 5, 10)


def test_the_first_contract_also_uses_a_models_own_loss(tmp_path: Path):
    path = model_file(
        tmp_path,
        OWN_LOSS + "\n\ndef torchdoctor_example():\n    x = torch.randint(0, 10, (2, 5))\n    return LM(), (x, x)\n",
    )
    ex = example(path, "LM")
    assert ex.loss_name == "model" and ex.target_kwarg == "targets"


def test_loss_model_without_a_loss_in_the_output_is_explained(tmp_path: Path):
    with pytest.raises(E.ExampleError) as info:
        dict_example(tmp_path, NET_WITH_STATE, '{"model": Net(), "inputs": (torch.randn(4, 3),), "loss": "model"}')
    assert info.value.kind == R.ERR_BAD_EXAMPLE
    assert 'says "loss": "model", but the forward returned tuple without a loss' in info.value.message


def test_a_forward_that_raises_when_given_its_targets_says_so(tmp_path: Path):
    body = OWN_LOSS.replace("logits.reshape(-1, 10)", "logits.view(3, -1)")
    with pytest.raises(E.ExampleError) as info:
        dict_example(
            tmp_path,
            body,
            '{"model": LM(), "inputs": (torch.randint(0, 10, (2, 5)),), "targets": torch.randint(0, 10, (2, 5))}',
            "LM",
        )
    assert info.value.kind == R.ERR_FORWARD and "raises when given targets=targets" in info.value.message


@pytest.mark.parametrize(
    "returned, words",
    [
        ('{"model": Net(), "input": torch.randn(2, 3)}', "unknown key 'input'"),
        ('{"inputs": torch.randn(2, 3)}', "the dict has no 'model'"),
        ('{"model": Net(), "kwargs": [1]}', "'kwargs' must be a dict of keyword arguments"),
        (
            '{"model": Net(), "inputs": (torch.randn(2, 3),), "loss": "mse"}',
            "'loss' is a function or \"model\", not 'mse'",
        ),
        ('{"model": Net(), "inputs": (1, None)}', "the inputs hold no tensor"),
    ],
)
def test_a_wrong_dict_example_is_explained(tmp_path: Path, returned: str, words: str):
    with pytest.raises(E.ExampleError) as info:
        dict_example(tmp_path, NET_WITH_STATE, returned)
    assert info.value.kind == R.ERR_BAD_EXAMPLE and words in info.value.message
