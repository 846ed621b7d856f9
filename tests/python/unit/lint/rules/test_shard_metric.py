"""TD020: an evaluation metric summed over one rank's DistributedSampler shard, reported as is."""

import pytest

from support.lint import findings, hits

HEAD = """
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

val_set = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
model = nn.Linear(8, 2)
"""
SHARDED = "val_loader = DataLoader(val_set, batch_size=8, sampler=DistributedSampler(val_set, shuffle=False))\n"

EVALUATE = """
def evaluate(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return correct / total
"""


def lint(setup: str, tail: str):
    return findings(HEAD + setup + EVALUATE + tail, "TD020")


def test_printed_on_rank_zero_is_a_warning_at_the_print() -> None:
    (finding,) = lint(SHARDED, "\nacc = evaluate(model, val_loader)\nif dist.get_rank() == 0:\n    print(acc)\n")
    assert finding.severity == "warning" and finding.line == 22
    assert "`DistributedSampler` (line 9)" in finding.message and "rank 0's shard only" in finding.message


def test_printed_on_every_rank_without_its_rank_or_compared_is_information() -> None:
    (printed,) = lint(SHARDED, "\nacc = evaluate(model, val_loader)\nprint(f'val accuracy {acc:.3f}')\n")
    assert printed.severity == "information" and "this rank's shard only" in printed.message
    (compared,) = lint(SHARDED, "\nbest = 0.0\nacc = evaluate(model, val_loader)\nis_best = acc > best\n")
    assert compared.severity == "information"


def test_a_loader_returned_by_a_helper_in_a_tuple_is_followed() -> None:
    setup = "def loaders():\n    a = DataLoader(val_set, sampler=DistributedSampler(val_set))\n"
    setup += "    b = DataLoader(val_set)\n    return a, b\n\nsharded, whole = loaders()\n"
    tail = "\nif dist.get_rank() == 0:\n    print(evaluate(model, whole))\n    print(evaluate(model, sharded))\n"
    assert hits(HEAD + setup + EVALUATE + tail, "TD020") == [("TD020", 27)]  # the sharded one only


def test_a_meter_updated_in_a_closure_and_returned_is_followed() -> None:
    text = (
        HEAD
        + SHARDED
        + """
class Meter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n):
        self.sum += value * n
        self.count += n


def validate(loader):
    def run(batches):
        with torch.no_grad():
            for x, y in batches:
                top1.update((model(x).argmax(1) == y).float().mean().item(), len(y))

    top1 = Meter()
    model.eval()
    run(loader)
    return top1.sum / top1.count


acc = validate(val_loader)
if dist.get_rank() == 0:
    print("acc", acc)
"""
    )
    assert [f.severity for f in findings(text, "TD020")] == ["warning"]


REDUCED = "\ncorrect_t = torch.tensor([1.0])\n"


@pytest.mark.parametrize(
    "setup, tail",
    [
        # reduced: all_reduce of a tensor made from the sums, a meter's own all_reduce, a helper that reduces
        (SHARDED, "\nacc = evaluate(model, val_loader)\nt = torch.tensor([acc])\ndist.all_reduce(t)\nprint(t)\n"),
        (SHARDED, "\nacc = evaluate(model, val_loader)\nacc = sync_mean(acc)\nprint(acc)\n"),
        (
            SHARDED,
            "\ndef mean(v):\n    t = torch.tensor([v])\n    dist.all_reduce(t)\n    return t.item() / 2\n"
            "\nacc = mean(evaluate(model, val_loader))\nprint(acc)\n",
        ),
        # handed to code we cannot see (which may reduce it)
        (SHARDED, "\nfrom metrics import average\nacc = average(evaluate(model, val_loader))\nprint(acc)\n"),
        # a per-rank figure, labelled so
        (SHARDED, "\nacc = evaluate(model, val_loader)\nprint(f'[GPU{dist.get_rank()}] accuracy', acc)\n"),
        # no DistributedSampler: the whole set on each rank
        (
            "val_loader = DataLoader(val_set, batch_size=8)\n",
            "\nif dist.get_rank() == 0:\n    print(evaluate(model, val_loader))\n",
        ),
        # torchmetrics synchronises in compute()
        ("import torchmetrics\n" + SHARDED, "\nprint(evaluate(model, val_loader))\n"),
    ],
    ids=[
        "all-reduced",
        "sync-helper",
        "local-helper-reduces",
        "opaque-helper",
        "rank-labelled",
        "no-sampler",
        "torchmetrics",
    ],
)
def test_reduced_labelled_or_unsharded_metrics_are_quiet(setup, tail) -> None:
    assert lint(setup, tail) == []


@pytest.mark.parametrize(
    "loop",
    [
        # training: backward in the loop (a running training loss is not this rule's business)
        "for x, y in val_loader:\n    loss = nn.functional.cross_entropy(model(x), y)\n    loss.backward()\n"
        "    running += loss.item()\nif dist.get_rank() == 0:\n    print(running)\n",
        # an estimate from a few batches on purpose (nanoGPT's estimate_loss, LLMs-from-scratch's calc_loss_loader)
        "model.eval()\nfor i, (x, y) in enumerate(val_loader):\n    if i >= 4:\n        break\n"
        "    with torch.no_grad():\n        running += nn.functional.cross_entropy(model(x), y).item()\n"
        "if dist.get_rank() == 0:\n    print(running / 4)\n",
        # nothing marks it as evaluation
        "for x, y in val_loader:\n    running += y.sum().item()\nif dist.get_rank() == 0:\n    print(running)\n",
    ],
    ids=["training-loop", "truncated-estimate", "not-evaluation"],
)
def test_training_loops_and_sampled_estimates_are_quiet(loop) -> None:
    assert hits(HEAD + SHARDED + "running = 0.0\n" + loop, "TD020") == []


def test_a_name_assigned_afresh_after_the_loop_is_not_the_metric() -> None:
    loop = "model.eval()\ncorrect = 0\nwith torch.no_grad():\n    for x, y in val_loader:\n"
    loop += "        correct += (model(x).argmax(1) == y).sum().item()\n"
    loop += "correct = count_on_rank_zero()\nif dist.get_rank() == 0:\n    print(correct)\n"
    assert hits(HEAD + SHARDED + loop, "TD020") == []


def test_values_reduced_batch_by_batch_before_they_are_summed_are_quiet() -> None:
    # Swin-Transformer's validate: ``acc1 = reduce_tensor(acc1)`` before ``acc1_meter.update(...)``
    loop = "model.eval()\ncorrect = 0.0\nwith torch.no_grad():\n    for x, y in val_loader:\n"
    loop += "        batch = (model(x).argmax(1) == y).float().mean()\n        dist.all_reduce(batch)\n"
    loop += "        correct += batch.item()\nif dist.get_rank() == 0:\n    print(correct)\n"
    assert hits(HEAD + SHARDED + loop, "TD020") == []
    # the same loop without the all_reduce is reported
    assert len(hits(HEAD + SHARDED + loop.replace("        dist.all_reduce(batch)\n", ""), "TD020")) == 1
