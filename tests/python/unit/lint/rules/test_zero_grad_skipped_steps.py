"""TD001's "cleared only sometimes" report needs a step that surely runs on every pass. A
loop that accumulates gradients by jumping over the step (``if not ready: continue``) clears
only when a new window starts, and that is right; so are two clears under opposite tests
(``if c:`` / ``if not c:``), a clear under ``if True:`` and one under ``if net.training:``. A
step that does run every pass beside a clear on every fourth pass is still reported."""

from __future__ import annotations

import pytest

from support.lint import hits

LOOP = """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3))
sgd = torch.optim.SGD(net.parameters(), lr=0.05)


def fit(batches, window):
    for n, (inputs, targets) in enumerate(batches):
        if n % window == 0:
            net.zero_grad()
        loss = nn.functional.cross_entropy(net(inputs), targets) / window
        loss.backward()
{skip}
        sgd.step()
"""

SKIPS = {
    "continue": "        if (n + 1) % window != 0:\n            continue",
    "nested continue": "        if n > 0:\n            if (n + 1) % window:\n                continue",
    "break": "        if n >= 1000:\n            break",
    "return": "        if (n + 1) % window:\n            return",
}


def td001(text: str):
    return [line for rule, line in hits(text) if rule == "TD001"]


@pytest.mark.parametrize("skip", sorted(SKIPS))
def test_a_step_that_a_jump_can_skip_is_not_called_unconditional(skip):
    assert td001(LOOP.format(skip=SKIPS[skip])) == []


def test_a_step_on_every_pass_with_a_clear_every_window_is_still_reported():
    assert td001(LOOP.format(skip="")) == [15]


def test_a_jump_after_the_step_does_not_make_it_conditional():
    text = LOOP.format(skip="") + "        if n > 1000:\n            break\n"
    assert td001(text) == [15]


WHILE = """
import torch
from torch import nn

net = nn.Linear(5, 1)
adam = torch.optim.Adam(net.parameters())
tick = 0
while tick < 400:
    if tick % 8 == 0:
        net.zero_grad()
    net(torch.randn(4, 5)).square().mean().backward()
    tick += 1
    if tick % 8:
        continue
    adam.step()
"""


def test_a_while_loop_that_skips_its_step_is_quiet():
    assert td001(WHILE) == []


CLEARS = """
import torch
from torch import nn

net = nn.Linear(5, 1)
adam = torch.optim.Adam(net.parameters())
release = False
for batch in range(100):
{clears}
    net(torch.randn(4, 5)).square().mean().backward()
    adam.step()
"""


@pytest.mark.parametrize(
    "clears",
    [
        "    if release:\n        net.zero_grad(set_to_none=True)\n    if not release:\n        net.zero_grad()",
        "    if True:\n        net.zero_grad()",
        "    if net.training:\n        net.zero_grad()",
    ],
)
def test_clears_that_surely_or_probably_run_every_pass_are_quiet(clears):
    assert td001(CLEARS.format(clears=clears)) == []


def test_one_clear_under_a_real_condition_is_reported():
    assert td001(CLEARS.format(clears="    if batch % 3 == 0:\n        net.zero_grad()")) == [11]
