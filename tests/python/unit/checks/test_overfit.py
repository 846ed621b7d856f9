"""Overfit one batch: healthy models memorise it; broken ones fail with the seed's causes."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from support.checks import MODELS, example, new_result, quiet, write
from torchdoctor.checks import example as E
from torchdoctor.checks import overfit


def run(ex, **options) -> dict:
    return overfit.run(ex, options, quiet, new_result("overfit"))


def test_healthy_mlp_passes_with_a_falling_curve():
    r = run(example(MODELS / "mlp.py", "TinyMLP"))
    assert r["verdict"] == "PASS", r["headline"]
    loss = r["curve"]["series"][0]["points"]
    assert loss[-1][1] <= max(0.1, 0.1 * loss[0][1])
    assert r["curve"]["series"][1]["name"] == "accuracy" and r["curve"]["series"][1]["points"][-1][1] == 1.0
    assert r["details"]["optimizer"] == "Adam" and r["details"]["lr"] == 1e-3 and r["details"]["batchSize"] == 8


def test_healthy_cnn_passes():
    assert run(example(MODELS / "cnn.py", "TinyCNN"))["verdict"] == "PASS"


def test_model_with_constructor_arguments_passes_through_its_example():
    assert run(example(MODELS / "ctor_args.py", "ConfigurableMLP"))["verdict"] == "PASS"


def test_softmax_before_cross_entropy_is_a_broken_loss():
    r = run(example(MODELS / "softmax_output.py", "SoftmaxClassifier"))
    assert r["verdict"] == "FAIL"
    assert any(s.startswith("Broken loss: the output rows are probabilities") for s in r["sentences"])
    assert r["sentences"][-1] == overfit.SEED_CAUSES


def test_layers_in_a_list_mean_the_optimizer_is_not_connected():
    r = run(example(MODELS / "unregistered_layers.py", "ListMLP"))
    assert r["verdict"] == "FAIL"
    assert r["headline"] == "ListMLP has no trainable parameters, so no optimizer can train it."
    assert r["sentences"][0].startswith("`layers` is a plain list of layers")
    assert any("Optimizer not connected to the parameters" in s for s in r["sentences"])


def test_graph_cut_in_forward_is_named(tmp_path: Path):
    path = write(
        tmp_path,
        "cut.py",
        """
        import torch.nn as nn

        class Cut(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(6, 8)
                self.b = nn.Linear(8, 3)

            def forward(self, x):
                return self.b(self.a(x).detach())   # a never learns
        """,
    )
    r = run(example(path, "Cut"), steps=5)
    assert r["verdict"] == "FAIL"
    assert any("a.weight, a.bias never received a gradient" in s for s in r["sentences"])


def test_misaligned_labels_are_found_in_the_users_batch(tmp_path: Path):
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    x[3] = x[1]
    y = torch.tensor([0, 1, 0, 0, 1, 1])  # rows 1 and 3: same input, different labels
    ex = E.Example(
        model=model,
        inputs=(x,),
        targets=y,
        loss_fn=F.cross_entropy,
        loss_name="cross-entropy",
        source="torchdoctor_example",
    )
    r = run(ex, steps=60)
    assert r["verdict"] == "FAIL"
    assert any(s.startswith("Data and labels misaligned: samples 1 and 3") for s in r["sentences"])


def test_nan_loss_is_reported_with_its_step(tmp_path: Path):
    path = write(
        tmp_path,
        "nan.py",
        """
        import torch
        import torch.nn as nn

        class LogOfNegative(nn.Module):
            def __init__(self):
                super().__init__()
                self.f = nn.Linear(5, 1)

            def forward(self, x):
                return torch.log(self.f(x) - 100.0)
        """,
    )
    r = run(example(path, "LogOfNegative"))
    assert r["verdict"] == "FAIL"
    assert r["headline"].startswith("The loss became nan at step 0")
    assert any("log(0)" in s for s in r["sentences"])
    assert r["curve"]["series"][0]["points"][0][1] != r["curve"]["series"][0]["points"][0][1]  # NaN until sanitised


def test_too_small_a_model_is_suggested_when_the_loss_falls_slowly(tmp_path: Path):
    path = write(
        tmp_path,
        "small.py",
        """
        import torch.nn as nn

        class Bottleneck(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(10, 1), nn.Linear(1, 6))

            def forward(self, x):
                return self.net(x)
        """,
    )
    r = run(example(path, "Bottleneck", {"batchSize": 32}), steps=40)
    assert r["verdict"] == "FAIL"
    assert any("too small" in s for s in r["sentences"])
