"""checks/sample_mixing.py through the shape trace: one sample's input changed, the others' predictions
must not move. What it names, when it keeps quiet (randomness, state, a layout Torch Doctor guessed),
and that it leaves the model and the RNG as it found them. The batch-dimension rule beside it warns
only when the prediction lost the batch."""

from __future__ import annotations

from pathlib import Path

import torch

from support.checks import example, new_result, quiet, write
from torchdoctor.checks import sample_mixing
from torchdoctor.checks import shape_trace as S


def run(ex) -> dict:
    return S.run(ex, {}, quiet, new_result("shapes"))


def model_file(tmp_path: Path, body: str) -> Path:
    return write(tmp_path, "net.py", "import random\nimport torch\nimport torch.nn as nn\n\n\n" + body)


BATCH_STATISTICS = """
class Standardize(nn.Module):
    def forward(self, x):
        return (x - x.mean(0, keepdim=True)) / (x.std(0, keepdim=True) + 1e-5)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Standardize()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(self.norm(x))
"""


def test_a_layer_that_normalises_with_the_batch_statistics_is_named(tmp_path: Path):
    r = run(example(model_file(tmp_path, BATCH_STATISTICS), "Net"))
    assert r["verdict"] == "WARN" and r["details"]["samplesMix"] is True
    assert r["details"]["samplesMixAt"] == "norm"
    assert r["sentences"][1].startswith(
        "It starts in `norm` (Standardize): its output moved for the other samples while its inputs did not."
    )


def test_batch_norm_is_probed_in_eval_mode_and_modes_and_rng_are_left_as_found(tmp_path: Path):
    """Batch norm mixes a training batch by design; on its running statistics it does not. The probe's
    forwards run in eval mode with a forked RNG: the model's modes and the global RNG are as before."""
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 3))\n\n    def forward(self, x):\n        return self.body(x)\n"
    ex = example(model_file(tmp_path, body), "Net")
    ex.model.train()
    ex.model.body[2].eval()  # a mixed state, kept as it was
    modes = [m.training for m in ex.model.modules()]
    rng = torch.get_rng_state()
    found = sample_mixing.probe(ex, ex.batch_size())
    assert found.checked and not found.mixes
    assert [m.training for m in ex.model.modules()] == modes
    assert torch.equal(torch.get_rng_state(), rng)


def test_randomness_from_torch_is_seeded_alike_and_other_randomness_gives_no_verdict(tmp_path: Path):
    """A VAE samples in eval mode too: with the RNG seeded alike per forward, the same noise is drawn and
    no sample moves. Noise from Python's ``random`` cannot be seeded so: the same batch twice differs,
    and the probe says it could not tell instead of calling it mixing."""
    torch_noise = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(6, 3)\n\n    def forward(self, x):\n        return self.fc(x) + torch.randn(x.shape[0], 3)\n"
    r = run(example(model_file(tmp_path, torch_noise), "Net"))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is False
    other_noise = torch_noise.replace("torch.randn(x.shape[0], 3)", "random.random()")
    r = run(example(model_file(tmp_path, other_noise), "Net"))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is None
    assert "the same batch gave another prediction the second time" in r["details"]["samplesMixNotChecked"]


def test_per_position_layers_on_a_flattened_batch_are_no_batch_change(tmp_path: Path):
    """A Linear on (B*T, E), reshaped back to (B, T, V): the prediction keeps the batch, the samples stay
    apart; neither the batch-dimension rule nor the probe may warn (a Mixtral router does this)."""
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.emb, self.fc = nn.Embedding(20, 8), nn.Linear(8, 20)\n\n    def forward(self, idx):\n        b, t = idx.shape\n        return self.fc(self.emb(idx).reshape(b * t, -1)).view(b, t, -1)\n"
    r = run(example(model_file(tmp_path, body), "Net", targets=False))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is False, r["sentences"]


def test_a_batch_reduced_away_before_a_linear_is_a_warning(tmp_path: Path):
    """``x.mean(0)`` where ``x.mean(1)`` was meant: one vector for the whole batch reaches the head."""
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.emb, self.head = nn.Embedding(20, 5), nn.Linear(5, 3)\n\n    def forward(self, idx):\n        return self.head(self.emb(idx).mean(1).mean(0))\n"
    r = run(example(model_file(tmp_path, body), "Net", targets=False))
    assert r["verdict"] == "WARN"
    assert r["sentences"][0].startswith("The batch dimension of 8 samples is gone before `head` (Linear, input (5))")
    assert r["details"]["samplesMix"] is None  # no prediction per sample to compare


def test_a_sequence_first_layer_on_a_batch_torch_doctor_laid_out_is_no_warning(tmp_path: Path):
    """A bidirectional LSTM with batch_first=False, class alone: Torch Doctor builds (T, B, F) as the
    layer says, so the rows of dim 0 are time steps and their mixing is the model's design."""
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lstm = nn.LSTM(4, 8, bidirectional=True)\n        self.fc = nn.Linear(16, 3)\n\n    def forward(self, x):\n        return self.fc(self.lstm(x)[0])\n"
    ex = example(model_file(tmp_path, body), "Net", targets=False)
    assert ex.source == "inferred" and ex.inputs[0].shape[0] == 16  # (T, B, F)
    r = run(ex)
    assert r["verdict"] == "PASS", r["sentences"]
    assert r["details"]["samplesMixAt"] == "lstm"  # found, and not held against the model
