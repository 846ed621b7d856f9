"""TD001 on an agent's ``learn()`` that another file calls in its loop (``zero_grad``'s
``_imported_instance_calls_in_a_loop``, 2026-12-07, a fetched Rainbow DQN): ``main.py`` builds
``Agent`` from ``agent.py`` and calls ``dqn.learn(mem)`` once per environment step, so a
``learn()`` that never clears gradients sums them over the whole run. A calling loop that clears
them itself, or no caller at all, says nothing."""

from __future__ import annotations

from support.lint import lint_files

AGENT = """
import torch


class Agent:
    def __init__(self, net):
        self.online_net = net
        self.optimiser = torch.optim.Adam(net.parameters(), lr=1e-4)

    def learn(self, batch):
        states, targets = batch
        {clear}
        loss = torch.nn.functional.mse_loss(self.online_net(states), targets)
        loss.backward()
        self.optimiser.step()
"""

MAIN = """
import torch
from agent import Agent

dqn = Agent(torch.nn.Linear(4, 2))
for t in range(1000):
    batch = (torch.randn(8, 4), torch.randn(8, 2))
    {main_clear}
    dqn.learn(batch)
"""


def td001(tmp_path, clear="pass", main_clear="pass", with_main=True):
    files = {"agent.py": AGENT.format(clear=clear)}
    if with_main:
        files["main.py"] = MAIN.format(main_clear=main_clear)
    found = lint_files(tmp_path, files, only=["agent.py"])["agent.py"].all
    return [f.line for f in found if f.rule_id == "TD001"]


def test_a_learn_method_called_in_another_files_loop_is_checked(tmp_path):
    assert td001(tmp_path) == [14]  # ``self.optimiser.step()``
    assert td001(tmp_path, clear="self.optimiser.zero_grad()") == []


def test_a_caller_that_clears_or_no_caller_says_nothing(tmp_path):
    assert td001(tmp_path, main_clear="dqn.optimiser.zero_grad()") == []
    assert td001(tmp_path, with_main=False) == []
