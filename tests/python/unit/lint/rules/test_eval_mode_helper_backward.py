"""TD008/TD009 and a training loop whose function is named for validation too
(``train_and_validate``) and whose backward happens in a helper of the file that is handed the
loss (``apply_update(loss / accum, opt, net)``): the loop trains, so it is no evaluation loop. The
evaluation helper beside it, without ``no_grad``, is still reported."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch


def apply_update(loss, opt, net, clip, do_step=True):
    loss.backward()
    if do_step:
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        opt.step()
        opt.zero_grad()


def evaluate(net, loader):
    net.eval()
    total = 0.0
    with torch.no_grad():
        for batch in loader:
            total += net(batch["x"], labels=batch["y"]).mean().item()
    return total


def train_and_validate(net, opt, train_loader, valid_loader, accum):
    net.train()
    for i, batch in enumerate(train_loader):
        loss = net(batch["x"], labels=batch["y"]).mean()
        apply_update(loss / accum, opt, net, 1.0, do_step=(i + 1) % accum == 0)
        if i % 100 == 0:
            print(evaluate(net, valid_loader))
            net.train()
"""


def found(text: str):
    return sorted(rule for rule, _ in hits(text) if rule in ("TD008", "TD009"))


def test_a_loop_that_backpropagates_through_a_helper_is_not_evaluation():
    assert found(SCRIPT) == []


def test_the_evaluation_helper_without_no_grad_is_still_reported():
    unguarded = SCRIPT.replace("    with torch.no_grad():\n", "    if True:\n")
    assert found(unguarded) == ["TD009"]


def test_a_validate_loop_whose_helper_does_not_backpropagate_is_still_reported():
    logging_only = SCRIPT.replace("    loss.backward()\n", "    print(loss.item())\n").replace(
        "        opt.step()\n", ""
    )
    assert "TD009" in found(logging_only)
