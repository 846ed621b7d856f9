"""TD002 in an update helper with two backward paths (``if use_amp:`` a scaled backward, ``else:``
a plain one) followed by ``if do_step: opt.step()``. A step moved above the plain backward, inside
the ``else``, runs before that backward: the scaled backward of the other branch never runs with
it and does not excuse it. The healthy helper stays quiet."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch


def apply_update(part, opt, net, use_amp, scaler, do_step=True):
    if use_amp:
        scaler.scale(part).backward()
    else:
        part.backward()
    if do_step:
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        opt.zero_grad()


def finetune(net, opt, loader, scaler, accum, use_amp):
    for i, batch in enumerate(loader):
        loss = net(batch["x"], labels=batch["y"]).mean()
        apply_update(loss / accum, opt, net, use_amp, scaler, do_step=(i + 1) % accum == 0)
"""


def td002(text: str):
    return [line for rule, line in hits(text) if rule == "TD002"]


def test_the_healthy_helper_is_quiet():
    assert td002(SCRIPT) == []


def test_a_step_moved_above_the_plain_backward_is_reported():
    moved = SCRIPT.replace(
        "    else:\n        part.backward()\n", "    else:\n        opt.step()\n        part.backward()\n"
    )
    assert td002(moved) == [8]  # the moved `opt.step()`
