"""checks/example/infer.py: one batch inferred from the first layer, then targets and loss from one forward."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from support.checks import MODELS, example, write
from torchdoctor.checks import example as E
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
    path = model_file(
        tmp_path,
        f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.first = {layer}\n\n    def forward(self, x):\n        return self.first(x)\n",
    )
    ex = example(path, "Net", targets=False)
    (x,) = ex.inputs
    assert tuple(x.shape) == shape and x.dtype == dtype
    assert ex.source == "inferred"
    assert ex.inferred[0] == "Constructed Net() with no arguments."
    assert "first layer first" in ex.inferred[1]
    if dtype == torch.int64:
        assert int(x.min()) >= 0 and int(x.max()) < 50


def test_batch_and_spatial_size_options(tmp_path: Path):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.c = nn.Conv2d(1, 2, 3)\n\n    def forward(self, x):\n        return self.c(x)\n",
    )
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
    path = model_file(
        tmp_path,
        "class Reg(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.f(x)\n",
    )
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


def test_forward_with_several_inputs_asks_for_an_example(tmp_path: Path):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(4, 2)\n\n    def forward(self, x, mask):\n        return self.f(x) * mask\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE
    assert "Net.forward takes 2 inputs (x, mask)" in info.value.message
    assert "forward argument: x, mask" in info.value.snippet


def test_layers_in_a_plain_list_are_named_when_nothing_tells_the_input():
    with pytest.raises(E.ExampleError) as info:
        module = E.load_user_module(str(MODELS / "unregistered_layers.py"))
        E.infer_inputs(E.construct(module.ListMLP), module.ListMLP, {})
    assert "`layers` is a plain list of layers" in info.value.message and "nn.ModuleList" in info.value.message


def test_lazy_first_layer_asks_for_an_example(tmp_path: Path):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.LazyLinear(2)\n\n    def forward(self, x):\n        return self.f(x)\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE and "tells the input size" in info.value.message


def test_forward_that_raises_is_explained_for_the_other_checks():
    with pytest.raises(E.ExampleError) as info:
        example(MODELS / "shape_mismatch.py", "LeNetish")
    assert info.value.kind == R.ERR_FORWARD
    assert "Layer `fc1` (Linear) expects 400 input features" in info.value.message
    assert info.value.message.endswith("Run the Shape trace to see where.")


def test_the_mnist_net_is_inferred_at_28x28_from_fc1(tmp_path: Path):
    # pytorch/examples mnist: conv, conv, a functional max_pool, flatten, fc1 in_features 9216
    path = model_file(
        tmp_path,
        "import torch\nimport torch.nn.functional as F\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv1 = nn.Conv2d(1, 32, 3, 1)\n        self.conv2 = nn.Conv2d(32, 64, 3, 1)\n"
        "        self.bn = nn.BatchNorm2d(64)\n        self.fc1 = nn.Linear(9216, 128)\n        self.fc2 = nn.Linear(128, 10)\n\n"
        "    def forward(self, x):\n        x = F.max_pool2d(self.bn(F.relu(self.conv2(F.relu(self.conv1(x))))), 2)\n"
        "        return F.log_softmax(self.fc2(F.relu(self.fc1(torch.flatten(x, 1)))), dim=1)\n",
    )
    ex = example(path, "Net", targets=False)
    assert tuple(ex.inputs[0].shape) == (8, 1, 28, 28)
    assert "28x28 solved from fc1 (Linear, in_features=9216)" in ex.inferred[1]
    assert int(ex.model.bn.num_batches_tracked) == 0  # the probes left batch norm's statistics alone
    assert ex.model.training


def test_no_bug_is_claimed_from_an_input_size_we_assumed(tmp_path: Path):
    # fc1 wants 1001 features: no input gives 8 * h * w = 1001 (not a multiple of the 8 channels), so
    # the size stays our guess (1000 would be 5x25: height and width are solved apart)
    path = model_file(
        tmp_path,
        "import torch\n\nclass Odd(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3, padding=1)\n        self.fc1 = nn.Linear(1001, 4)\n\n"
        "    def forward(self, x):\n        return self.fc1(torch.flatten(self.conv(x), 1))\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Odd")
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE
    assert "may be our assumption rather than a bug" in info.value.message
    assert "flatten-size mistake" not in info.value.message
    from support.checks import new_result, quiet
    from torchdoctor.checks import shape_trace

    r = shape_trace.run(example(path, "Odd", targets=False), {}, quiet, new_result("shapes"))
    assert r["verdict"] == "WARN" and "assumed" in r["headline"]
    assert not any("flatten-size mistake" in s for s in r["sentences"])


@pytest.mark.parametrize(
    "body, spatial",
    [
        # a DCGAN-style generator: a latent (N, nz, 1, 1) grows into an image
        ("nn.ConvTranspose2d(16, 8, 4, 1, 0), nn.ReLU(), nn.ConvTranspose2d(8, 3, 4, 2, 1)", (1, 1)),
        # a U-Net's upsampling block takes feature maps: a 3x3 convolution further on rejects 1x1
        ("nn.ConvTranspose2d(16, 8, 2, stride=2), nn.Conv2d(8, 1, 3)", (32, 32)),
    ],
    ids=["generator", "upsampling-block"],
)
def test_a_first_transposed_convolution_gets_a_latent_only_when_the_forward_takes_it(tmp_path: Path, body, spatial):
    path = model_file(
        tmp_path,
        f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.main = nn.Sequential({body})\n\n"
        "    def forward(self, x):\n        return self.main(x)\n",
    )
    ex = example(path, "Net", targets=False)
    assert tuple(ex.inputs[0].shape[2:]) == spatial
    assert ("latent" in ex.inferred[1]) == (spatial == (1, 1))
    assert all(m.training for m in ex.model.modules())  # the probe forward put train mode back
