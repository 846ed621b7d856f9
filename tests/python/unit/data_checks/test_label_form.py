"""One-hot labels against class indices: an error only where the known loss raises or trains on
nonsense, a note otherwise (float one-hot is valid for CrossEntropyLoss since torch 1.10)."""

from __future__ import annotations

import torch
import torch.nn.functional as TF
from torch import nn
from torch.utils.data import DataLoader, Dataset

from support.data_checks import Images, Vectors, kinds
from torchdoctor.data_checks import engine
from torchdoctor.data_checks.label_form import loss_name


class KerasStyleDigits(Dataset):
    """Flattened digits whose label was one-hot encoded in __getitem__, as a Keras port does."""

    def __init__(self, n=120, classes=10, dtype=torch.int64):
        g = torch.Generator().manual_seed(3)
        self.x = torch.randn(n, 64, generator=g)
        self.y = torch.arange(n) % classes
        self.classes, self.dtype = classes, dtype

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], TF.one_hot(self.y[i], self.classes).to(self.dtype)


class Tags(Dataset):
    """Multi-label tags: several 1s per row (not one-hot)."""

    def __init__(self, n=120):
        g = torch.Generator().manual_seed(4)
        self.x = torch.randn(n, 16, generator=g)
        self.y = (torch.rand(n, 5, generator=g) < 0.4).float()
        self.y[:, 0] = 1.0  # at least one tag each, and most rows have two or more

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def run(ds, loss=None, model=None, **splits):
    return engine.run({"train": ds, **splits}, model, {}, loss=loss)


def notes_about_onehot(result):
    return [n for n in result["notes"] if "one-hot rows" in n]


def test_integer_onehot_for_cross_entropy_is_an_error_that_quotes_torch():
    r = run(KerasStyleDigits(), nn.CrossEntropyLoss())
    assert kinds(r) == ["onehot-labels-for-loss"]
    f = r["findings"][0]
    assert f["severity"] == "error" and f["details"]["width"] == 10 and f["details"]["loss"] == "CrossEntropyLoss"
    assert "Expected floating point type for target with class probabilities, got Long" in f["message"]
    assert "argmax(1)" in f["message"] and ".float()" in f["message"]


def test_the_error_is_what_torch_raises():
    x, y = KerasStyleDigits()[0]
    logits = torch.randn(1, 10)
    try:
        nn.CrossEntropyLoss()(logits, y[None])
    except RuntimeError as exc:
        assert "Expected floating point type for target with class probabilities" in str(exc)
    else:
        raise AssertionError("CrossEntropyLoss took integer one-hot targets")
    nn.CrossEntropyLoss()(logits, y[None].float())  # float rows are class probabilities: valid


def test_float_onehot_for_cross_entropy_is_valid_and_only_a_note():
    r = run(KerasStyleDigits(dtype=torch.float32), nn.CrossEntropyLoss())
    assert r["findings"] == [] and r["verdict"] == "PASS"
    (note,) = notes_about_onehot(r)
    assert "class probabilities" in note and "valid" in note


def test_any_onehot_for_nll_loss_is_an_error():
    for dtype in (torch.int64, torch.float32):
        r = run(DataLoader(KerasStyleDigits(dtype=dtype), batch_size=16), nn.NLLLoss())
        assert kinds(r) == ["onehot-labels-for-loss"]
        assert "multi-target not supported" in r["findings"][0]["message"]


def test_onehot_for_a_binary_loss_only_errs_on_integer_rows():
    assert kinds(run(KerasStyleDigits(), nn.BCEWithLogitsLoss())) == ["onehot-labels-for-loss"]
    r = run(KerasStyleDigits(dtype=torch.float32), nn.BCEWithLogitsLoss())
    assert r["findings"] == [] and "multi-label" in notes_about_onehot(r)[0]


def test_without_the_loss_onehot_is_a_note_not_a_finding():
    for dtype, says in ((torch.int64, "raises on integer rows"), (torch.float32, "float one-hot rows are valid")):
        r = run(KerasStyleDigits(dtype=dtype))
        assert r["findings"] == [] and r["verdict"] == "PASS"
        (note,) = notes_about_onehot(r)
        assert note.startswith("train: labels are one-hot rows of width 10") and says in note
        assert "loss is not known" in note


def test_class_indices_for_a_binary_loss_are_an_error_and_binary_labels_are_not():
    r = run(Images(classes=4), nn.BCEWithLogitsLoss())
    assert kinds(r) == ["index-labels-for-binary-loss"]
    assert r["findings"][0]["details"]["classes"] == 4
    assert run(Images(classes=2), nn.BCEWithLogitsLoss())["findings"] == []


def test_healthy_pairs_stay_silent():
    assert run(Vectors(), nn.CrossEntropyLoss())["findings"] == []  # indices for CrossEntropyLoss
    assert run(Vectors(), nn.NLLLoss())["findings"] == []
    r = run(Tags(), nn.BCEWithLogitsLoss())  # multi-label rows: not one-hot
    assert r["findings"] == [] and notes_about_onehot(r) == []


def test_loss_names_are_known_only_for_torchs_own_losses():
    assert loss_name(nn.CrossEntropyLoss()) == loss_name(nn.CrossEntropyLoss) == "CrossEntropyLoss"
    assert loss_name(TF.nll_loss) == "NLLLoss"
    assert loss_name(TF.binary_cross_entropy_with_logits) == "BCEWithLogitsLoss"

    class ArgmaxCE(nn.CrossEntropyLoss):
        def forward(self, logits, target):
            return super().forward(logits, target.argmax(1))

    assert loss_name(ArgmaxCE()) is None  # a subclass may convert the target: unknown
    assert loss_name(nn.MSELoss()) is None and loss_name(None) is None
    assert run(KerasStyleDigits(), ArgmaxCE())["findings"] == []
