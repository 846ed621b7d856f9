"""A non-finite gradient or loss that no module output showed first is traced to the batch the
loop holds, when the batch has NaN/Inf (``data_origin.py``); masks and sentinels are not blamed."""

from __future__ import annotations

import sys

import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.data_origin import nonfinite_data


class Reader(nn.Module):
    """An LSTM over rows of an image, as pytorch/examples' mnist_rnn reads MNIST."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(28, 32, batch_first=True)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def lstm_run(poison_at: int):
    torch.manual_seed(0)
    model = Reader()
    optimizer = torch.optim.Adam(model.parameters())
    with watching(mode="log") as seen:
        for step in range(3):
            images, labels = torch.randn(8, 28, 28), torch.randint(0, 10, (8,))
            if step == poison_at:
                images[3, 5, 7] = float("inf")
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images), labels).backward()
            optimizer.step()
    return seen


def test_an_lstm_that_stays_finite_on_inf_data_is_traced_to_the_batch():
    """The gates saturate on Inf, the forward stays finite, the first sign is the NaN gradient of
    the input weights: the report names that parameter and says the batch held the Inf."""
    [report] = lstm_run(poison_at=1).reports
    assert report["kind"] == "nonfinite_grad" and report["step"] == 1
    assert report["param"] == "model.lstm.weight_ih_l0"
    assert [(d["name"], d["counts"]["posinf"]) for d in report["data_bad"]] == [("images", 1)]
    assert "`images` (Inf: 1 of 6272 values). It came from the input, not the model" in report["sentence"]


def test_a_nan_target_of_a_functional_loss_is_the_data_not_the_loss_code():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step(batch):
        x, y = batch
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

    with watching(mode="log") as seen:
        for step in range(3):
            x, y = torch.randn(16, 4), torch.randn(16, 1)
            if step == 2:
                y[5] = float("nan")
            train_step((x, y))
    [report] = seen.reports
    assert report["kind"] == "loss_nan" and report["step"] == 2
    assert [d["name"] for d in report["data_bad"]] == ["y"]  # the plain name, not `batch[1]`
    assert "every module output was finite; the data of this step already had" in report["sentence"]
    assert "the loss computation made it" not in report["sentence"]


class SqrtNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        return self.fc2(torch.where(h > 0, torch.sqrt(h), torch.zeros_like(h)))  # NaN gradient, finite data


def test_a_model_made_nan_gradient_blames_no_mask_no_sentinel_and_no_clean_batch():
    torch.manual_seed(0)
    model = SqrtNet()
    mask = torch.full((6, 6), float("-inf")).triu(1)  # an additive attention mask: 0 and -Inf by design
    best = torch.tensor(float("inf"))  # a "best loss so far" sentinel
    running = torch.tensor(float("nan"))  # a running mean of the loss, NaN since an earlier step
    batch = torch.randn(16, 4)
    with watching(mode="log") as seen:
        model(batch).mean().backward()
    [report] = seen.reports
    assert report["kind"] == "nonfinite_grad" and report["data_bad"] == []
    assert "the data of this step" not in report["sentence"]
    assert mask.isinf().any() and best.isinf() and running.isnan()  # kept alive in the frame the watch read


def test_only_data_is_counted_and_containers_are_named_by_item():
    weight = nn.Parameter(torch.full((3,), float("nan")))  # a parameter: the model's, not the data's
    made = torch.ones(3, requires_grad=True) * float("nan")  # an output of autograd
    batch = {"pixel_values": torch.tensor([1.0, float("nan")]), "labels": torch.tensor([1, 2])}
    pair = (torch.zeros(2), torch.tensor([float("inf"), -1.0]))
    found = nonfinite_data(sys._getframe())
    assert [(d["name"], d["counts"]["nan"], d["counts"]["posinf"]) for d in found] == [
        ("batch['pixel_values']", 1, 0),
        ("pair[1]", 0, 1),
    ]
    assert weight.isnan().all() and made.isnan().all() and len(batch) == len(pair) == 2


def run_epoch(model, optimizer, loader):
    for images, labels in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()


def test_a_nan_the_first_layer_receives_names_the_batch_of_the_loop_that_called_the_model():
    """Forward: the first module's input had the NaN and no module made it; the loop's batch is
    named (read from the frames outside the model's forward)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 26 * 26, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = [(torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))) for _ in range(3)]
    loader[1][0][2, 0, 3, 4] = float("nan")
    with watching(mode="log") as seen:
        run_epoch(model, optimizer, loader)
    [report] = seen.reports
    assert report["kind"] == "nonfinite_output" and report["step"] == 1 and report["module"] == "0"
    assert [d["name"] for d in report["data_bad"]] == ["images"]
    assert (
        "no module before it made any: it came from outside the modules, and the data of this step already had "
        "non-finite values: `images` (NaN: 1 of 6272 values); check the dataset"
    ) in report["sentence"]
    assert "code between modules" not in report["sentence"]


def test_a_view_of_a_named_batch_is_not_named_again_and_the_loops_name_wins():
    data = torch.randn(4, 1, 2, 2)
    data[0, 0, 0, 0] = float("nan")

    def forward_like(x):
        x = x.view(4, -1)  # what a model's forward makes of the batch: the same memory
        return nonfinite_data(sys._getframe(), 2)

    assert [d["name"] for d in forward_like(data)] == ["data"]


def test_of_a_table_and_the_batch_sliced_from_it_the_batch_is_named():
    table = torch.randn(320, 10)
    table[150, 4] = float("nan")

    def forward_like(batch):
        return nonfinite_data(sys._getframe(), 2)

    [found] = forward_like(table[128:192])
    assert found["name"] == "batch" and found["counts"]["nan"] == 1 and found["counts"]["numel"] == 640


def test_a_name_two_frames_give_to_copies_of_the_batch_is_named_once():
    """The loop's ``x`` and the ``x`` its helper casts it to are two tensors (two memories) with one
    name: the sentence names `x` once, with the loop's counts, not "`x` ..., `x` ..."."""
    torch.manual_seed(0)
    model = Reader()

    def train_step(x, labels):
        x = x.float()  # a copy: other memory, the same name
        nn.functional.cross_entropy(model(x), labels).backward()

    x, labels = torch.randn(8, 28, 28, dtype=torch.float64), torch.randint(0, 10, (8,))
    x[3, 5, 7] = float("inf")
    batches = [x, x]  # one tensor twice in a list: still one datum
    with watching(mode="log") as seen:
        train_step(x, labels)
    [report] = seen.reports
    assert report["kind"] == "nonfinite_grad" and len(batches) == 2
    assert [(d["name"], d["counts"]["posinf"], d["counts"]["numel"]) for d in report["data_bad"]] == [("x", 1, 6272)]
    assert report["sentence"].count("`x` (Inf: 1 of 6272 values)") == 1 and "`x` (Inf" in report["sentence"]
