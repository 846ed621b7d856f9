"""TD014: model moved to a device, inputs left on the CPU (one scope) (moved from test_lint_misc_rules.py)."""

import pytest

from support.lint import code, findings, fixed, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


# -- TD014 --------------------------------------------------------------------------------

DEV = T + "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 2).to(device)\n"


def test_factory_input_without_device_gets_a_device_fix():
    text = DEV + "x = torch.randn(8, 4)\nout = model(x)\n"
    assert hits(text) == [("TD014", 7)]
    assert fixed(text, "TD014").splitlines()[5] == "x = torch.randn(8, 4, device=device)"


def test_loader_batches_used_without_moving():
    text = (
        DEV + "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=4, shuffle=True)\n"
        "for xb, yb in loader:\n    out = model(xb)\n"
    )
    assert hits(text) == [("TD014", 9)]


@pytest.mark.parametrize(
    "line",
    [
        "x = torch.randn(8, 4, device=device)\nout = model(x)",
        "x = torch.randn(8, 4).to(device)\nout = model(x)",
        "x = torch.randn(8, 4)\nx = x.to(device)\nout = model(x)",
        "out = model(batch)",
    ],
)
def test_inputs_on_the_model_device_are_fine(line):
    assert hits(DEV + line + "\n") == []


def test_cpu_models_and_dtype_moves_are_fine():
    text = (
        T + "model = nn.Linear(4, 2).to('cpu')\nnet = nn.Linear(4, 2).to(torch.float64)\n"
        "x = torch.randn(1, 4)\nmodel(x)\nnet(x)\n"
    )
    assert hits(text) == []


def test_from_numpy_input_has_no_fix():
    (finding,) = findings(DEV + "x = torch.from_numpy(arr)\nmodel(x)\n")
    assert finding.rule_id == "TD014" and finding.fix is None


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
