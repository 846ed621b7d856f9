"""TD003 (softmax before cross-entropy), TD004 (sigmoid before BCE-with-logits),
TD006 (NLL on non-log-probabilities)."""

import pytest

from support.lint import findings, fixed, hits

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize(
    "softmax",
    ["F.softmax(out, dim=1)", "torch.softmax(out, 1)", "out.softmax(dim=-1)", "nn.functional.softmax(out, dim=1)"],
)
def test_inline_softmax_into_cross_entropy(softmax):
    text = HEADER + f"crit = nn.CrossEntropyLoss()\nloss = crit({softmax}, y)\n"
    assert hits(text) == [("TD003", 5)]
    assert fixed(text, "TD003").splitlines()[4] == "loss = crit(out, y)"


def test_functional_cross_entropy_and_import_aliases():
    text = "from torch.nn.functional import cross_entropy as ce, softmax\nloss = ce(softmax(z, dim=1), t)\n"
    assert hits(text) == [("TD003", 2)]


def test_softmax_through_a_variable_has_no_fix():
    text = HEADER + "probs = F.softmax(model(x), dim=1)\nacc = probs.argmax(1)\nloss = F.cross_entropy(probs, y)\n"
    (finding,) = findings(text)
    assert finding.rule_id == "TD003" and finding.fix is None
    assert "line 4" in finding.message


def test_model_whose_forward_ends_in_softmax():
    text = (
        HEADER
        + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = self.fc(x)
        return F.softmax(x, dim=1)

model = Net()
criterion = nn.CrossEntropyLoss()
loss = criterion(model(torch.randn(2, 4)), torch.tensor([0, 2]))
"""
    )
    assert hits(text) == [("TD003", 16)]


def test_sequential_ending_in_softmax_moved_to_a_device():
    text = (
        HEADER + "model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1)).to('cuda')\n"
        "loss = nn.CrossEntropyLoss()(model(x), y)\n"
    )
    assert hits(text) == [("TD003", 5)]


def test_log_softmax_before_cross_entropy_is_only_information():
    text = HEADER + "loss = F.cross_entropy(F.log_softmax(z, dim=1), y)\n"
    (finding,) = findings(text)
    assert (finding.rule_id, finding.severity) == ("TD003", "information")


def test_logits_into_cross_entropy_are_fine():
    text = (
        HEADER
        + """
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
crit = nn.CrossEntropyLoss(label_smoothing=0.1)
loss = crit(model(x), y)
probs = F.softmax(model(x), dim=1)
"""
    )
    assert hits(text) == []


def test_forward_returning_softmax_only_at_inference_is_fine():
    text = (
        HEADER
        + """
class Net(nn.Module):
    def forward(self, x):
        logits = self.fc(x)
        if self.training:
            return logits
        return logits.softmax(dim=1)

net = Net()
loss = F.cross_entropy(net(x), y)
"""
    )
    assert hits(text) == []


def test_softmax_with_shadowed_name_is_not_confused():
    text = HEADER + "def softmax(x):\n    return x\nloss = F.cross_entropy(softmax(z), y)\n"
    assert hits(text) == []


def test_sigmoid_before_bce_with_logits():
    text = HEADER + "crit = nn.BCEWithLogitsLoss()\nloss = crit(torch.sigmoid(head(x)), y)\n"
    assert hits(text) == [("TD004", 5)]
    assert fixed(text, "TD004").splitlines()[4] == "loss = crit(head(x), y)"


def test_sigmoid_layer_in_a_self_attribute():
    text = (
        HEADER
        + """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
        self.loss_fn = nn.BCEWithLogitsLoss()

    def training_step(self, batch, idx):
        x, y = batch
        return self.loss_fn(self.net(x), y)
"""
    )
    assert hits(text) == [("TD004", 13)]


def test_sigmoid_before_plain_bce_is_fine():
    text = HEADER + "loss = nn.BCELoss()(torch.sigmoid(z), y)\nloss2 = F.binary_cross_entropy_with_logits(z, y)\n"
    assert hits(text) == []


def test_nll_on_raw_logits():
    text = HEADER + "head = nn.Linear(8, 4)\nloss = F.nll_loss(head(x), y)\n"
    assert hits(text) == [("TD006", 5)]


def test_nll_on_softmax_gets_a_log_softmax_fix():
    text = HEADER + "loss = nn.NLLLoss()(F.softmax(z, dim=1), y)\n"
    assert hits(text) == [("TD006", 4)]
    assert fixed(text, "TD006").splitlines()[3] == "loss = nn.NLLLoss()(F.log_softmax(z, dim=1), y)"


@pytest.mark.parametrize(
    "inp", ["F.log_softmax(head(x), dim=1)", "torch.log_softmax(head(x), 1)", "logp", "unknown_model(x)"]
)
def test_nll_on_log_probabilities_or_unknown_is_fine(inp):
    text = HEADER + f"head = nn.Linear(8, 4)\nlogp = head(x).log_softmax(1)\nloss = F.nll_loss({inp}, y)\n"
    assert hits(text) == []


# A text recognizer picks its criterion by the head it trains: CTCLoss (which requires
# log-probabilities) or CrossEntropyLoss; the log_softmax only feeds the CTC branch.
CRITERION_BY_HEAD = """
import torch
import torch.nn as nn


def train(model, loader, optimizer, use_ctc):
    if use_ctc:
        criterion = nn.CTCLoss(zero_infinity=True)
    else:
        criterion = nn.CrossEntropyLoss(ignore_index=0)
    for images, text, lengths in loader:
        if use_ctc:
            preds = model(images)
            sizes = torch.full((images.size(0),), preds.size(1), dtype=torch.long)
            preds = preds.log_softmax(2).permute(1, 0, 2)
            cost = criterion(preds, text, sizes, lengths)
        else:
            preds = model(images, text[:, :-1])
            cost = criterion(preds.reshape(-1, preds.size(-1)), text[:, 1:].reshape(-1))
        optimizer.zero_grad()
        cost.backward()
        optimizer.step()
"""


def test_a_criterion_chosen_by_branch_is_not_assumed_to_be_cross_entropy():
    assert hits(CRITERION_BY_HEAD, "TD003") == []


def test_the_same_loop_with_cross_entropy_only_is_reported():
    only_ce = CRITERION_BY_HEAD.replace("nn.CTCLoss(zero_infinity=True)", "nn.CrossEntropyLoss()")
    assert [rule for rule, _ in hits(only_ce, "TD003")] == ["TD003"]


# The same choice made by the caller: validation() gets the criterion as a parameter, from a
# test() that picks it by the head (directly, and through benchmark_all()).
CRITERION_PASSED = """
import torch
import torch.nn as nn


def validation(model, criterion, loader, use_ctc):
    for images, text, sizes, lengths in loader:
        preds = model(images)
        if use_ctc:
            cost = criterion(preds.log_softmax(2).permute(1, 0, 2), text, sizes, lengths)
        else:
            cost = criterion(preds.flatten(0, 1), text.flatten())
        print(cost.item())


def benchmark_all(model, criterion, loaders, use_ctc):
    for loader in loaders:
        validation(model, criterion, loader, use_ctc)


def test(model, loaders, use_ctc):
    if use_ctc:
        criterion = nn.CTCLoss(zero_infinity=True)
    else:
        criterion = nn.CrossEntropyLoss(ignore_index=0)
    benchmark_all(model, criterion, loaders, use_ctc)
    validation(model, criterion, loaders[0], use_ctc)
"""


def test_a_criterion_chosen_by_the_caller_is_not_assumed_either():
    assert hits(CRITERION_PASSED, "TD003") == []


def test_a_caller_passing_cross_entropy_only_is_reported():
    only_ce = CRITERION_PASSED.replace("nn.CTCLoss(zero_infinity=True)", "nn.CrossEntropyLoss()")
    assert [rule for rule, _ in hits(only_ce, "TD003")] == ["TD003"]
