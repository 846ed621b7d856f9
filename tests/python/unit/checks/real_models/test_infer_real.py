"""Targets and loss inferred for a class alone (issue 14): a VAE or an autoencoder is a reconstruction,
a token model is a next-token language model; the bugs planted in them are still caught, and a
softmax classifier is still a classification."""

from __future__ import annotations

from pathlib import Path

import pytest
import real_models as M
import torch
import torch.nn.functional as F

from support.checks import example, new_result, quiet, write
from torchdoctor.checks import overfit

HEADER = f"""
import sys
sys.path.insert(0, {M.HERE!r})
import torch
import torch.nn as nn
import torch.nn.functional as F
from real_models import VAE, CharLM, ConvAutoencoder
"""
# ``real_models``, not ``models``: the file is loaded in this process, where another test may
# already have imported some other ``models`` (the sample workspace's); conftest.py registers
# this folder's models.py as ``real_models``.


def alone(tmp_path: Path, class_name: str, body: str = ""):
    """The Example a worker builds for ``class_name`` with no torchdoctor_example() (class alone)."""
    torch.manual_seed(0)
    return example(write(tmp_path, f"{class_name.lower()}_alone.py", HEADER + body), class_name)


def run(ex) -> dict:
    # what is learned, not how fast: a loaded machine must not stop a slow learner short
    return overfit.run(ex, {"timeBudgetSeconds": 900}, quiet, new_result("overfit", type(ex.model).__name__))


def test_a_vae_alone_is_a_reconstruction_of_its_input_and_passes(tmp_path: Path):
    ex = alone(tmp_path, "VAE")
    (x,) = ex.inputs
    assert ex.loss_name == "mse" and torch.equal(ex.targets, x)  # the input, not random classes of 784
    assert 0 <= float(x.min()) and float(x.max()) <= 1  # redrawn inside the sigmoid's range
    said = ex.inferred[-1]
    assert said.startswith("Output (8, 784) (the first of tuple of 3 tensors) has the input's 784 values per sample")
    assert "KL term" in said and "torchdoctor_example()" in said
    r = run(ex)
    assert r["verdict"] == "PASS", r["headline"]  # was FAIL: cross-entropy on 784 sigmoid "classes"


def test_a_conv_autoencoder_with_a_sigmoid_decoder_alone_passes(tmp_path: Path):
    ex = alone(tmp_path, "ConvAutoencoder")
    assert ex.targets.shape == ex.inputs[0].shape and torch.equal(ex.targets, ex.inputs[0])
    assert "in [0, 1] has the input's 1024 values per sample" in ex.inferred[-1]
    assert "KL" not in ex.inferred[-1]
    r = run(ex)
    assert r["verdict"] == "PASS", r["headline"]


def test_a_vae_whose_decoder_ignores_the_code_still_fails_alone(tmp_path: Path):
    ex = alone(
        tmp_path,
        "BlindVAE",
        """
class BlindVAE(VAE):
    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar) * 0.0  # the bug: the decoder never sees the code
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar
""",
    )
    assert ex.loss_name == "mse"
    r = run(ex)
    assert r["verdict"] == "FAIL", r["headline"]


def test_a_token_model_alone_predicts_the_next_token(tmp_path: Path):
    ex = alone(tmp_path, "CharLM")
    (idx,) = ex.inputs
    assert ex.loss_name == "cross-entropy" and ex.targets.dtype == torch.int64
    assert ex.targets.shape == idx.shape and torch.equal(ex.targets[:, :-1], idx[:, 1:])  # shifted by one
    assert "a language model. Targets: the next token" in ex.inferred[-1]
    out = ex.output()
    assert torch.isclose(ex.loss(out), F.cross_entropy(out.reshape(-1, M.VOCAB), ex.targets.reshape(-1)))
    r = run(ex)
    assert r["verdict"] == "PASS", r["headline"]  # was MSE against random (8, 16, 65) floats
    assert r["details"]["finalAccuracy"] >= overfit.TOKEN_ACCURACY


@pytest.mark.parametrize(
    "bug, line",
    [
        ("softmax", "return self.head(h).softmax(-1)  # probabilities into cross-entropy"),
        ("ignores-input", "return self.head(self.rnn(self.embed(torch.zeros_like(idx)))[0])"),
    ],
)
def test_planted_bugs_in_a_token_model_alone_fail(tmp_path: Path, bug: str, line: str):
    ex = alone(
        tmp_path,
        "BuggyLM",
        f"""
class BuggyLM(CharLM):
    def forward(self, idx):
        h, _ = self.rnn(self.embed(idx))
        {line}
""",
    )
    assert ex.loss_name == "cross-entropy"
    r = run(ex)
    assert r["verdict"] == "FAIL", (bug, r["headline"])


def test_a_softmax_classifier_with_as_many_classes_as_inputs_stays_a_classification(tmp_path: Path):
    ex = alone(
        tmp_path,
        "SoftNet",
        """
class SoftNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 10), nn.Softmax(dim=1))

    def forward(self, x):
        return self.fc(x)
""",
    )
    assert ex.loss_name == "cross-entropy" and ex.targets.shape == (8,)
    r = run(ex)
    assert r["verdict"] == "FAIL" and any(
        s.startswith("Broken loss: the output rows are probabilities") for s in r["sentences"]
    )
