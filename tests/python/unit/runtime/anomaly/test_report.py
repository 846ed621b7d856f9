"""The facts a module report gathers after a hit (:mod:`report`), on small loops shaped like the
real programs they were found on: a NaN written into a weight between steps (is an optimizer
update to blame?), an Inf in a buffer (a positional table), a parent whose forward reads its
child's weight directly (an embedding dropout), and a report made while evaluating (BatchNorm's
running statistics lagging behind in a ``test()`` loop)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from support.anomaly import watching


def accumulating_loop(poison_at: int, micro_steps: int = 8, accumulate: int = 2) -> None:
    """Adapters trained with accumulation over 2 backward calls; one weight poisoned by the loop."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(micro_steps):
        if step == poison_at:
            with torch.no_grad():
                model[2].weight[0, 0] = float("nan")  # the loop writes it, between two forwards
        model(torch.randn(4, 6)).pow(2).mean().backward()
        if step % accumulate == accumulate - 1:
            opt.step()
            opt.zero_grad()


def test_a_nan_the_loop_wrote_with_no_optimizer_step_since_is_not_called_an_update():
    with watching() as seen:
        accumulating_loop(poison_at=3)  # after backward 2; the optimizer stepped after backward 1
    report = seen.reports[0]
    assert report["kind"] == "nonfinite_output" and report["qualname"] == "model.2"
    assert report["backward_calls"] == 3 and report["params_bad"] == ["weight"]
    assert report["params_stepped"] is False
    assert "no optimizer step ran since the last backward: code between the steps" in report["sentence"]
    assert "an earlier update" not in report["sentence"]


def test_an_optimizer_step_since_the_last_backward_is_named():
    with watching() as seen:
        accumulating_loop(poison_at=4)  # the optimizer stepped right after backward 3
    report = seen.reports[0]
    assert report["backward_calls"] == 4 and report["params_stepped"] is True
    assert report["params_stepped_by"] == "opt" and report["params_stepped_named"] is True
    assert "and `opt.step()` ran since the last backward: that update, or code after it" in report["sentence"]


def test_a_nan_there_before_the_first_step_is_still_the_initialisation():
    with watching() as seen:
        accumulating_loop(poison_at=0)
    report = seen.reports[0]
    assert report["backward_calls"] == 0 and "params_stepped" not in report
    assert "before any update: its initialisation or a loaded checkpoint put it there" in report["sentence"]


class Positional(nn.Module):
    """A sinusoid table kept as a buffer and added to the embeddings."""

    def __init__(self, width: int = 8, length: int = 16) -> None:
        super().__init__()
        position = torch.arange(length, dtype=torch.float32)[:, None]
        self.register_buffer("table", torch.sin(position / 10 ** (torch.arange(width) / width)))

    def forward(self, x):
        return x + self.table[: x.size(1)]


def test_an_inf_in_a_buffer_is_named_with_the_module():
    torch.manual_seed(0)
    embed, positional, head = nn.Embedding(10, 8), Positional(), nn.Linear(8, 10)
    positional.table[2, 3] = float("inf")
    ids = torch.randint(0, 10, (4, 6))
    with watching() as seen:
        F.cross_entropy(head(positional(embed(ids))).flatten(0, 1), ids.flatten()).backward()
    report = seen.reports[0]
    assert report["qualname"] == "positional" and report["inputs_bad"] is False
    assert report["buffers_bad"] == ["table"] and report["params_bad"] == []
    assert "its inputs were finite, but its buffers already had Inf (`table`)" in report["sentence"]


def test_a_healthy_buffer_is_not_named():
    torch.manual_seed(0)
    positional, head = Positional(), nn.Linear(8, 1)
    with torch.no_grad():
        head.weight[0, 0] = float("nan")  # the true bug is next to it, in a parameter
    with watching() as seen:
        head(positional(torch.randn(2, 6, 8))).sum().backward()
    report = seen.reports[0]
    assert report["qualname"] == "head" and report["params_bad"] == ["weight"] and "buffers_bad" not in report


class DroppedEmbedding(nn.Module):
    """A language model whose forward reads its embedding's weight itself (an embedding dropout),
    so the embedding module is never called: the NaN first shows in the dropout after it."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Embedding(12, 8)
        self.lockdrop = nn.Dropout(0.0)
        self.decoder = nn.Linear(8, 12)

    def forward(self, ids):
        emb = F.embedding(ids, self.encoder.weight * 1.0)
        return self.decoder(self.lockdrop(emb))


def test_a_parent_whose_own_weights_hold_the_nan_says_so():
    torch.manual_seed(0)
    model = DroppedEmbedding()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ids = torch.arange(12).view(3, 4)
    with watching() as seen:
        for step in range(3):
            if step == 2:
                with torch.no_grad():
                    model.encoder.weight[5, 0] = float("nan")
            opt.zero_grad()
            F.cross_entropy(model(ids).flatten(0, 1), ids.flatten()).backward()
            opt.step()
    report = seen.reports[0]
    assert report["made_inside"] is True and report["qualname"] == "model"
    assert report["params_bad"] == ["encoder.weight"] and report["params_stepped"] is True
    assert "no module before made any; its parameters already had NaN (`encoder.weight`)" in report["sentence"]


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 16)
        self.norm = nn.BatchNorm1d(16, momentum=0.5)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(self.norm(self.fc(x)))


def fit_and_test():
    """Train on tiny inputs, then test() on inputs 30 000 times larger: in eval mode BatchNorm
    divides by its running statistics (learnt on the tiny ones), not by the batch's."""
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(12):
        x = torch.randn(32, 4) * 1e-3
        opt.zero_grad()
        F.cross_entropy(model(x), (x[:, 0] > 0).long()).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        model(torch.randn(32, 4) * 30)


def test_a_report_made_in_a_test_loop_says_it_was_evaluation():
    with watching(threshold=1e3) as seen:
        fit_and_test()
    [report] = seen.reports
    assert report["kind"] == "exploding_output" and report["qualname"] == "model.norm" and report["step"] == 12
    assert report["evaluation"] == {"eval_mode": True, "grad_off": "no_grad"}
    assert "at step 12, in evaluation (`model` in eval mode, under no_grad)" in report["sentence"]


def test_the_same_explosion_in_training_is_not_called_evaluation():
    torch.manual_seed(0)
    model = Classifier()
    with torch.no_grad():
        model.out.weight.mul_(1e6)  # the true bug next to it: a training forward explodes
    with watching(threshold=1e3) as seen:
        F.cross_entropy(model(torch.randn(32, 4)), torch.zeros(32, dtype=torch.long)).backward()
    report = seen.reports[0]
    assert report["kind"] == "exploding_output" and report["qualname"] == "model.out"
    assert "evaluation" not in report and "evaluation" not in report["sentence"]
