"""The model and batch a check runs on: the user's torchdoctor_example() first, else inference."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from checks_helpers import MODELS, example, write
from torchdoctor.checks import example_input as E
from torchdoctor.checks import result as R


def model_file(tmp_path: Path, body: str, name: str = "net.py") -> Path:
    return write(tmp_path, name, "import torch\nimport torch.nn as nn\n\n\n" + body)


@pytest.mark.parametrize(
    "layer, shape, dtype",
    [
        ("nn.Linear(20, 4)", (8, 20), torch.float32),
        ("nn.Conv1d(2, 4, 3)", (8, 2, 64), torch.float32),
        ("nn.Conv2d(3, 4, 3)", (8, 3, 32, 32), torch.float32),
        ("nn.Conv3d(1, 2, 3)", (8, 1, 16, 16, 16), torch.float32),
        ("nn.Embedding(50, 6)", (8, 16), torch.int64),
        ("nn.LSTM(5, 7, batch_first=True)", (8, 16, 5), torch.float32),
        ("nn.GRU(5, 7)", (16, 8, 5), torch.float32),
    ],
)
def test_input_is_inferred_from_the_first_layer(tmp_path: Path, layer: str, shape: tuple, dtype):
    path = model_file(tmp_path, f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.first = {layer}\n\n    def forward(self, x):\n        return self.first(x)\n")
    ex = example(path, "Net", targets=False)
    (x,) = ex.inputs
    assert tuple(x.shape) == shape and x.dtype == dtype
    assert ex.source == "inferred"
    assert ex.inferred[0] == "Constructed Net() with no arguments."
    assert "first layer first" in ex.inferred[1]
    if dtype == torch.int64:
        assert int(x.min()) >= 0 and int(x.max()) < 50


def test_batch_and_spatial_size_options(tmp_path: Path):
    path = model_file(tmp_path, "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.c = nn.Conv2d(1, 2, 3)\n\n    def forward(self, x):\n        return self.c(x)\n")
    ex = example(path, "Net", {"batchSize": 3, "spatialSize": 28}, targets=False)
    assert tuple(ex.inputs[0].shape) == (3, 1, 28, 28)
    assert "spatial size 28" in ex.inferred[1]


def test_classification_output_gives_cross_entropy_with_random_classes():
    ex = example(MODELS / "mlp.py", "TinyMLP")
    assert ex.loss_name == "cross-entropy"
    assert ex.targets.dtype == torch.int64 and tuple(ex.targets.shape) == (8,)
    assert int(ex.targets.max()) < 4
    assert ex.inferred[-1].startswith("Output (8, 4) is (batch, classes): cross-entropy")


def test_other_outputs_give_mse(tmp_path: Path):
    path = model_file(tmp_path, "class Reg(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.f(x)\n")
    ex = example(path, "Reg")
    assert ex.loss_name == "mse" and tuple(ex.targets.shape) == (8, 1) and ex.targets.is_floating_point()
    assert "MSE" in ex.inferred[-1]


def test_draws_come_from_a_private_generator():
    before = torch.random.get_rng_state()
    module = E.load_user_module(str(MODELS / "mlp.py"))
    model = E.construct(E.find_class(module, "TinyMLP"))  # construction itself uses torch's RNG (nn.Linear init)
    state = torch.random.get_rng_state()
    inputs, _ = E.infer_inputs(model, type(model), {})
    ex = E.complete(E.Example(model=model, inputs=inputs), {})
    assert torch.equal(torch.random.get_rng_state(), state)
    assert ex.targets is not None
    again, _ = E.infer_inputs(model, type(model), {})
    assert torch.equal(again[0], inputs[0])  # same seed, same batch
    del before


def test_constructor_with_arguments_asks_for_an_example_with_the_snippet(tmp_path: Path):
    path = model_file(tmp_path, "class Net(nn.Module):\n    def __init__(self, hidden, n_classes=3):\n        super().__init__()\n        self.f = nn.Linear(4, hidden)\n\n    def forward(self, x):\n        return self.f(x)\n")
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    err = info.value
    assert err.kind == R.ERR_NEEDS_EXAMPLE
    assert err.message.startswith("Net.__init__ needs arguments (hidden): Torch Doctor cannot guess them.")
    assert "def torchdoctor_example():" in err.snippet and "model = Net(hidden=...)" in err.snippet
    assert "return model, (inputs, targets)" in err.snippet


def test_forward_with_several_inputs_asks_for_an_example(tmp_path: Path):
    path = model_file(tmp_path, "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(4, 2)\n\n    def forward(self, x, mask):\n        return self.f(x) * mask\n")
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE
    assert "Net.forward takes 2 inputs (x, mask)" in info.value.message
    assert "forward argument: x, mask" in info.value.snippet


def test_user_example_in_the_file_wins():
    ex = example(MODELS / "ctor_args.py", "ConfigurableMLP")
    assert ex.source == "torchdoctor_example"
    assert tuple(ex.inputs[0].shape) == (8, 12)
    assert ex.inferred[0] == "Model and batch from torchdoctor_example() in ctor_args.py."


def test_user_example_in_a_sibling_file_gets_the_same_class(tmp_path: Path):
    model_file(tmp_path, "class Net(nn.Module):\n    def __init__(self, k):\n        super().__init__()\n        self.f = nn.Linear(k, 2)\n\n    def forward(self, x):\n        return self.f(x)\n", name="mynet.py")
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
        ("Net()", "must return (model, (inputs, targets))"),
        ("(Net(), torch.randn(2, 3))", "second item must be the pair (inputs, targets)"),
        ("('model', (torch.randn(2, 3), None))", "not an nn.Module"),
        ("(Net(), ([1, 2], None))", "inputs must be a tensor or a tuple of tensors"),
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
    assert "boom.py\", line 4, in helper" in info.value.detail
    assert "example_input.py" not in info.value.detail


def test_unknown_class_lists_the_ones_there():
    module = E.load_user_module(str(MODELS / "custom_autograd.py"))
    with pytest.raises(E.ExampleError) as info:
        E.find_class(module, "Nope")
    assert info.value.kind == R.ERR_NO_CLASS and "LearnableSwish, SwishNet" in info.value.message


def test_model_that_needs_cuda_says_so(tmp_path: Path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    path = model_file(tmp_path, "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 2).cuda()\n\n    def forward(self, x):\n        return self.f(x)\n")
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_CUDA
    assert info.value.message.startswith("Net() needs CUDA, and the torch of this interpreter sees no GPU")


def test_layers_in_a_plain_list_are_named_when_nothing_tells_the_input():
    with pytest.raises(E.ExampleError) as info:
        module = E.load_user_module(str(MODELS / "unregistered_layers.py"))
        E.infer_inputs(E.construct(module.ListMLP), module.ListMLP, {})
    assert "`layers` is a plain list of layers" in info.value.message and "nn.ModuleList" in info.value.message


def test_lazy_first_layer_asks_for_an_example(tmp_path: Path):
    path = model_file(tmp_path, "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.LazyLinear(2)\n\n    def forward(self, x):\n        return self.f(x)\n")
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE and "tells the input size" in info.value.message


def test_forward_that_raises_is_explained_for_the_other_checks():
    with pytest.raises(E.ExampleError) as info:
        example(MODELS / "shape_mismatch.py", "LeNetish")
    assert info.value.kind == R.ERR_FORWARD
    assert "Layer `fc1` (Linear) expects 400 input features" in info.value.message
    assert info.value.message.endswith("Run the Shape trace to see where.")
