"""TD013 (backward in no_grad), TD014 (device mismatch), TD015 (torch.load),
TD016 (functional dropout), TD017 (unshuffled training loader)."""

import pytest
from lint_helpers import code, findings, fixed, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD013 --------------------------------------------------------------------------------

def test_backward_inside_no_grad_block():
    text = T + "with torch.no_grad():\n    loss = crit(model(x), y)\n    loss.backward()\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.line, finding.severity) == ("TD013", 6, "error")


@pytest.mark.parametrize("head", ["@torch.no_grad()", "@torch.inference_mode()"])
def test_backward_in_a_no_grad_function(head):
    text = T + f"{head}\ndef step(x):\n    model(x).sum().backward()\n"
    assert hits(text) == [("TD013", 6)]


@pytest.mark.parametrize("text", [
    "with torch.no_grad():\n    with torch.enable_grad():\n        loss.backward()\n",
    "with torch.set_grad_enabled(True):\n    loss.backward()\n",
    "with torch.set_grad_enabled(is_train):\n    loss.backward()\n",
    "with torch.no_grad():\n    def later():\n        loss.backward()\n",
    "with torch.inference_mode(False):\n    loss.backward()\n",
])
def test_backward_with_grad_enabled_is_fine(text):
    assert hits(T + text) == []


# -- TD014 --------------------------------------------------------------------------------

DEV = T + "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 2).to(device)\n"


def test_factory_input_without_device_gets_a_device_fix():
    text = DEV + "x = torch.randn(8, 4)\nout = model(x)\n"
    assert hits(text) == [("TD014", 7)]
    assert fixed(text, "TD014").splitlines()[5] == "x = torch.randn(8, 4, device=device)"


def test_loader_batches_used_without_moving():
    text = DEV + "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=4, shuffle=True)\n" \
                 "for xb, yb in loader:\n    out = model(xb)\n"
    assert hits(text) == [("TD014", 9)]


@pytest.mark.parametrize("line", [
    "x = torch.randn(8, 4, device=device)\nout = model(x)",
    "x = torch.randn(8, 4).to(device)\nout = model(x)",
    "x = torch.randn(8, 4)\nx = x.to(device)\nout = model(x)",
    "out = model(batch)",
])
def test_inputs_on_the_model_device_are_fine(line):
    assert hits(DEV + line + "\n") == []


def test_cpu_models_and_dtype_moves_are_fine():
    text = T + "model = nn.Linear(4, 2).to('cpu')\nnet = nn.Linear(4, 2).to(torch.float64)\n" \
               "x = torch.randn(1, 4)\nmodel(x)\nnet(x)\n"
    assert hits(text) == []


def test_from_numpy_input_has_no_fix():
    (finding,) = findings(DEV + "x = torch.from_numpy(arr)\nmodel(x)\n")
    assert finding.rule_id == "TD014" and finding.fix is None


# -- TD015 --------------------------------------------------------------------------------

def test_weights_only_false_is_a_warning_with_fix():
    text = T + "state = torch.load(path, weights_only=False)\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.severity) == ("TD015", "warning")
    assert fixed(text, "TD015").splitlines()[3] == "state = torch.load(path, weights_only=True)"


def test_missing_weights_only_is_information_with_fix():
    text = T + "state = torch.load(\n    path,\n    map_location='cpu',\n)\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.severity) == ("TD015", "information")
    assert "map_location='cpu', weights_only=True" in fixed(text, "TD015")


@pytest.mark.parametrize("call", ["torch.load(p, weights_only=True)", "torch.load(p, **kw)",
                                  "torch.load(p, weights_only=flag)", "pickle.load(p)", "np.load(p)"])
def test_safe_or_undecidable_loads_are_fine(call):
    assert hits(T + "import pickle\nimport numpy as np\n" + call + "\n") == []


# -- TD016 --------------------------------------------------------------------------------

MLP = T + code("""
    class MLP(nn.Module):
        def forward(self, x):
            return {body}
""")


def test_functional_dropout_without_training_flag():
    text = MLP.format(body="F.dropout(x, 0.3)")
    assert hits(text) == [("TD016", 6)]
    assert fixed(text, "TD016").splitlines()[5].strip() == "return F.dropout(x, 0.3, training=self.training)"


def test_dropout_module_built_inside_forward():
    assert hits(MLP.format(body="nn.Dropout(0.3)(x)")) == [("TD016", 6)]


@pytest.mark.parametrize("body", ["F.dropout(x, 0.3, training=self.training)", "F.dropout(x, 0.3, True)",
                                  "F.dropout(x, 0.3, training=True)", "self.drop(x)", "F.relu(x)"])
def test_explicit_training_flag_or_layer_is_fine(body):
    assert hits(MLP.format(body=body)) == []


def test_functional_dropout_outside_a_module_is_fine():
    assert hits(T + "def aug(x):\n    return F.dropout(x, 0.1)\n") == []


# -- TD017 --------------------------------------------------------------------------------

DL = "from torch.utils.data import DataLoader\n"


def test_training_loader_without_shuffle():
    text = DL + "train_loader = DataLoader(dataset, batch_size=32)\n"
    assert hits(text) == [("TD017", 2)]
    assert fixed(text, "TD017").splitlines()[1] == "train_loader = DataLoader(dataset, batch_size=32, shuffle=True)"


def test_training_dataset_name_is_enough():
    assert hits(DL + "loader = DataLoader(train_ds, 64)\n") == [("TD017", 2)]


@pytest.mark.parametrize("line", [
    "train_loader = DataLoader(ds, batch_size=32, shuffle=True)",
    "train_loader = DataLoader(ds, batch_size=32, shuffle=False)",
    "train_loader = DataLoader(ds, batch_size=32, sampler=sampler)",
    "train_loader = DataLoader(ds, 32, True)",
    "val_loader = DataLoader(train_ds, batch_size=32)",
    "test_loader = DataLoader(test_ds)",
    "train_loader = DataLoader(train_stream, batch_size=4)",
    "train_loader = DataLoader(ds, **loader_kwargs)",
])
def test_shuffled_explicit_or_not_training_loaders_are_fine(line):
    assert hits(DL + line + "\n") == []


def test_models_handed_to_ddp_move_their_inputs_themselves():
    text = T + code("""
        model = Net().cuda(rank)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        net = torch.nn.parallel.DistributedDataParallel(other.cuda(rank), device_ids=[rank])
        inp = torch.randn(10, 4)
        model(inp)
        net(inp)
    """)
    assert hits(text) == []


def test_in_place_move_then_cpu_input():
    text = T + "model = nn.Linear(4, 2)\nmodel.cuda()\nx = torch.zeros(3, 4)\nmodel(x)\n"
    assert hits(text) == [("TD014", 7)]
    assert 'torch.zeros(3, 4, device="cuda")' in fixed(text, "TD014")
