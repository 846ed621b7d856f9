"""TD008/TD009 on a validation pass written inside the training loop as a count of batches
(a GPT trainer's ``for _ in range(args.val_steps): x, y = val_loader.next_batch()``): the
``range`` over a number named for evaluation data makes it an evaluation loop, as a loop over
``val_loader`` is. The healthy pass (``eval()`` and ``no_grad``) stays quiet, and a ``range`` over
a training count is no evaluation."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn


def main(args, model, train_loader, val_loader):
    opt = torch.optim.AdamW(model.parameters())
    for step in range(args.steps):
        if step % args.every == 0:
            model.eval()
            with torch.no_grad():
                total = 0.0
                for _ in range({count}):
                    x, y = val_loader.next_batch()
                    total += nn.functional.cross_entropy(model(x), y).item()
            print("val", total)
        model.train()
        x, y = train_loader.next_batch()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
"""


def found(count: str, drop: str = ""):
    text = SCRIPT.format(count=count)
    if drop:
        text = text.replace(drop, "")
    return sorted(rule for rule, _ in hits(text) if rule in ("TD008", "TD009"))


def test_the_healthy_validation_pass_is_quiet():
    assert found("args.val_steps") == []


def test_a_counted_validation_pass_without_no_grad_is_reported():
    unguarded = SCRIPT.format(count="args.val_steps").replace(
        "            with torch.no_grad():\n", "            if True:\n"
    )
    assert sorted(rule for rule, _ in hits(unguarded) if rule == "TD009") == ["TD009"]


def test_a_counted_validation_pass_without_eval_is_reported():
    assert found("args.val_steps", "            model.eval()\n") == ["TD008"]


def test_a_count_not_named_for_evaluation_is_no_evaluation():
    unguarded = SCRIPT.format(count="args.extra_steps").replace(
        "            with torch.no_grad():\n", "            if True:\n"
    )
    assert [rule for rule, _ in hits(unguarded) if rule in ("TD008", "TD009")] == []
