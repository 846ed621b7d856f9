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


DUAL_ENCODER = """
class DualEncoder(nn.Module):
    def __init__(self, bug=False):
        super().__init__()
        self.bug = bug
        self.img, self.txt = nn.Linear(16, 8), nn.Embedding(50, 8)

    def forward(self, pixels, ids):
        a = self.img(pixels)
        a = a + a.mean(0) if self.bug else a
        b = self.txt(ids).mean(1)
        return a @ b.T


class Buggy(DualEncoder):
    def __init__(self):
        super().__init__(bug=True)


def torchdoctor_example(name):
    g = torch.Generator().manual_seed(0)
    x, ids = torch.randn(8, 16, generator=g), torch.randint(0, 50, (8, 5), generator=g)
    return {"model": DualEncoder() if name == "DualEncoder" else Buggy(), "inputs": (x, ids), "targets": torch.arange(8)}
"""


def test_in_batch_similarities_move_only_in_the_changed_samples_column_and_pass(tmp_path: Path):
    """Contrastive logits a @ b.T compare every sample with every other on purpose: the changed sample's
    column moves in every row. That column is left out; a real mixing before the product still warns."""
    path = model_file(tmp_path, DUAL_ENCODER)
    r = run(example(path, "DualEncoder"))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is False, r["sentences"]
    assert "which the comparison excluded" in r["details"]["samplesMixNote"]
    r = run(example(path, "Buggy"))
    assert r["verdict"] == "WARN" and r["details"]["samplesMix"] is True


def test_batch_norm_without_running_statistics_is_a_fact_not_a_warning(tmp_path: Path):
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.bn = nn.BatchNorm1d(6, track_running_stats=False)\n        self.fc = nn.Linear(6, 3)\n\n    def forward(self, x):\n        return self.fc(self.bn(x))\n"
    r = run(example(model_file(tmp_path, body), "Net"))
    assert r["verdict"] == "PASS" and r["sentences"] == []
    assert r["details"]["samplesMix"] is True and r["details"]["samplesMixAt"] == "bn"
    assert "by design" in r["details"]["samplesMixNote"]


SHARED_MEMORY = """
class Net(nn.Module):
    '''model(idx, memory): every token attends over a memory bank shared by all samples, (8, 16).'''

    def __init__(self, bug=False):
        super().__init__()
        self.bug = bug
        self.emb, self.head = nn.Embedding(30, 16), nn.Linear(16, 30)

    def forward(self, idx, memory):
        h = self.emb(idx)
        h = h + h.mean(0) if self.bug else h
        return self.head(h + (h @ memory.T).softmax(-1) @ memory)


class Buggy(Net):
    def __init__(self):
        super().__init__(bug=True)


class Net4(Net):
    pass


def torchdoctor_example(name):
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 30, (4 if name == "Net4" else 8, 5), generator=g)
    return {"model": {"Buggy": Buggy, "Net4": Net4}.get(name, Net)(), "inputs": (idx, torch.randn(8, 16, generator=g)), "targets": idx}
"""


def test_an_argument_whose_first_dimension_equals_the_batch_by_chance_gives_no_warning(tmp_path: Path):
    """A shared (8, 16) memory beside a batch of 8: its row 8 is replaced too and every sample moves. The
    primary input alone moves nobody, so the probe says it cannot tell; mixing through the primary warns."""
    path = model_file(tmp_path, SHARED_MEMORY)
    r = run(example(path, "Net"))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is None, r["sentences"]
    assert "argument 2 may have a first dimension of 8 by chance" in r["details"]["samplesMixNotChecked"]
    r = run(example(path, "Buggy"))
    assert r["verdict"] == "WARN" and r["details"]["samplesMix"] is True
    r = run(example(path, "Net4"))  # a batch of 4: the memory's 8 rows are left alone
    assert r["details"]["batchSize"] == 4 and r["details"]["samplesMix"] is False


SEQUENCE_FIRST = """
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.enc(x))


def torchdoctor_example():
    x = torch.randn(10, 4, 16, generator=torch.Generator().manual_seed(0))
    return {"model": Enc(), "inputs": (x,), "targets": torch.randn(10, 4, 3)}
"""


def test_a_sequence_first_example_keeps_its_samples_apart_along_dim_1(tmp_path: Path):
    """An encoder with batch_first=False on the (T, B, E) its author gave: dim 0 mixes (time steps),
    dim 1 does not; the probe tries dim 1 and passes, saying which reading it rests on."""
    r = run(example(model_file(tmp_path, SEQUENCE_FIRST), "Enc"))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is False, r["sentences"]
    assert r["details"]["samplesMixNote"].startswith("`enc.layers.0.self_attn` (MultiheadAttention, batch_first=False)")


def test_a_prediction_that_ignores_the_input_gives_no_verdict(tmp_path: Path):
    """A zero-initialised head hides the mixing before it: the changed sample's own prediction does not
    move, so "no mixing" would be a guess."""
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body, self.head = nn.Linear(6, 16), nn.Linear(16, 3)\n        nn.init.zeros_(self.head.weight)\n        nn.init.zeros_(self.head.bias)\n\n    def forward(self, x):\n        h = self.body(x)\n        return self.head(h + h.mean(0))\n"
    r = run(example(model_file(tmp_path, body), "Net"))
    assert r["details"]["samplesMix"] is None
    assert "the changed sample's own prediction did not move" in r["details"]["samplesMixNotChecked"]


def test_mixing_in_the_models_own_forward_names_it(tmp_path: Path):
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(6, 3)\n\n    def forward(self, x):\n        y = self.fc(x)\n        return y - y.mean(0)\n"
    r = run(example(model_file(tmp_path, body), "Net"))
    assert r["verdict"] == "WARN"
    assert r["sentences"][1].startswith("It starts in the model's own forward (Net): its output moved")


def test_the_probe_is_skipped_when_it_would_not_fit_in_the_time_budget(tmp_path: Path):
    ex = example(model_file(tmp_path, BATCH_STATISTICS), "Net")
    r = S.run(ex, {"timeBudgetSeconds": 0}, quiet, new_result("shapes"))
    assert r["verdict"] == "PASS" and r["table"]["rows"]
    assert r["details"]["samplesMix"] is None
    assert "over the time budget" in r["details"]["samplesMixNotChecked"]


def test_fingerprint_norms_see_every_element_a_chunk_at_a_time(monkeypatch):
    monkeypatch.setattr(sample_mixing, "NORM_CHUNK", 7)
    for t in (torch.arange(2 * 5000).reshape(2, 5000) % 13, torch.ones(2, 5000, dtype=torch.bool)):
        fp, per_row = sample_mixing.fingerprint(t, 2, {})
        assert per_row and fp.shape == (2, sample_mixing.PROJECTIONS + 1)
        expected = torch.linalg.vector_norm(t.double(), dim=1)
        assert torch.allclose(fp[:, -1], expected)
    big = torch.full((2, 3000), 300.0, dtype=torch.float16)  # the sum of squares overflows float16
    assert torch.isfinite(sample_mixing.fingerprint(big, 2, {})[0]).all()


def test_the_probe_forks_every_initialised_cuda_device_and_restores_mps(monkeypatch):
    """On the CPU: CUDA said initialised with two devices, MPS available; the probe forks both CUDA
    devices (not only those holding parameters) and puts MPS's generator state back."""
    import contextlib

    forked, mps = [], {"state": torch.tensor([1], dtype=torch.uint8), "set": []}

    @contextlib.contextmanager
    def fork_rng(devices):
        forked.append(list(devices))
        yield

    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: None)
    monkeypatch.setattr(torch.random, "fork_rng", fork_rng)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.setattr(torch.mps, "get_rng_state", lambda: mps["state"].clone())
    monkeypatch.setattr(torch.mps, "manual_seed", lambda seed: None)
    monkeypatch.setattr(torch.mps, "set_rng_state", lambda state: mps["set"].append(state))
    with sample_mixing.seeded():
        pass
    assert forked == [[0, 1]] and len(mps["set"]) == 1 and torch.equal(mps["set"][0], mps["state"])
