"""TD001 and a GAN loop that clears a network's gradients in two places: before its main
backward, and again in a regularisation block run every few passes (``if reg_now:`` clears,
backpropagates a penalty and steps). With the first clear gone, the step runs on every pass
but the gradients are cleared only on the regularisation passes: each backward adds to the
last. The healthy loop, gradient accumulation (the step under the same ``if`` as the clear), and
an ``if``/``else`` that clears on both branches stay quiet."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn

critic = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
maker = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
c_opt = torch.optim.Adam(critic.parameters(), lr=2e-4)
m_opt = torch.optim.Adam(maker.parameters(), lr=2e-4)


def train(data, iters, reg_every):
    for i in range(iters):
        real = next(data)
        fake = maker(torch.randn(real.size(0), 4))
        c_loss = nn.functional.softplus(critic(fake.detach())).mean() + nn.functional.softplus(-critic(real)).mean()
        critic.zero_grad()
        c_loss.backward()
        c_opt.step()

        reg_now = i % reg_every == 0
        if reg_now:
            real.requires_grad = True
            score = critic(real)
            (grad,) = torch.autograd.grad(score.sum(), real, create_graph=True)
            critic.zero_grad()
            (grad.pow(2).sum() * reg_every).backward()
            c_opt.step()

        m_loss = nn.functional.softplus(-critic(maker(torch.randn(real.size(0), 4)))).mean()
        maker.zero_grad()
        m_loss.backward()
        m_opt.step()
"""


def td001(text: str):
    return [line for rule, line in hits(text) if rule == "TD001"]


def test_the_healthy_loop_is_quiet():
    assert td001(SCRIPT) == []


def test_the_main_clear_removed_leaves_only_the_regularisation_clear_and_is_reported():
    broken = SCRIPT.replace("        critic.zero_grad()\n        c_loss.backward()", "        c_loss.backward()")
    assert td001(broken) == [16]  # `c_opt.step()`, stepped on every pass


def test_an_if_else_that_clears_on_both_branches_is_quiet():
    both = SCRIPT.replace(
        "        critic.zero_grad()\n        c_loss.backward()",
        "        if i % 2:\n            critic.zero_grad()\n        else:\n            critic.zero_grad(set_to_none=True)\n"
        "        c_loss.backward()",
    )
    assert td001(both) == []


ACCUMULATION = """
import torch
from torch import nn

net = nn.Linear(8, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def train(loader, accum):
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(net(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            opt.step()
            net.zero_grad()
"""


def test_gradient_accumulation_is_quiet():
    assert td001(ACCUMULATION) == []
