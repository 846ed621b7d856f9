"""Optimizer steps spelled by a wrapper (lint/torchapi.py): a Transformer trainer wraps Adam in
a warm-up schedule object whose ``step_and_update_lr()`` sets the rate and steps. That call is
the loop's optimizer step, so a missing ``zero_grad()``, a step before ``backward()`` and a
model left in eval mode by the evaluation are reported as for ``optimizer.step()``; the healthy
loop stays quiet, and a ``step_*`` method of something that is no optimizer is no step."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn


class WarmupSchedule:
    def __init__(self, inner, warmup):
        self.inner, self.warmup, self.count = inner, warmup, 0

    def zero_grad(self):
        self.inner.zero_grad()

    def step_and_update_lr(self):
        self.count += 1
        for group in self.inner.param_groups:
            group["lr"] = min(self.count ** -0.5, self.count * self.warmup ** -1.5)
        self.inner.step()


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        return sum(model(x).sum().item() for x in batches)


def run(model, batches, epochs):
    {holder} = WarmupSchedule(torch.optim.Adam(model.parameters()), 4000)
    for epoch in range(epochs):
{body}
        evaluate(model, batches)
"""

HEALTHY = """\
        model.train()
        for x in batches:
            {holder}.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            {holder}.step_and_update_lr()"""


def rules(holder: str, body: str):
    text = SCRIPT.format(holder=holder, body=body.format(holder=holder))
    return sorted({rule for rule, _ in hits(text) if rule in ("TD001", "TD002", "TD010")})


def test_the_healthy_loop_is_quiet():
    assert rules("optimizer", HEALTHY) == []


def test_a_missing_zero_grad_is_reported():
    assert rules("optimizer", HEALTHY.replace("            {holder}.zero_grad()\n", "")) == ["TD001"]


def test_a_step_before_backward_is_reported():
    swapped = HEALTHY.replace(
        "            loss.backward()\n            {holder}.step_and_update_lr()",
        "            {holder}.step_and_update_lr()\n            loss.backward()",
    )
    assert rules("optimizer", swapped) == ["TD002"]


def test_eval_mode_left_by_the_evaluation_is_reported():
    assert rules("optimizer", HEALTHY.replace("        model.train()\n", "")) == ["TD010"]


def rules_without_zero_grad_method(holder: str, body: str):
    """As ``rules``, the wrapper class without its ``zero_grad()``: a rate schedule only."""
    text = SCRIPT.replace("    def zero_grad(self):\n        self.inner.zero_grad()\n\n", "")
    text = text.format(holder=holder, body=body.format(holder=holder))
    return sorted({rule for rule, _ in hits(text) if rule in ("TD001", "TD002", "TD010")})


def test_a_step_method_of_something_else_is_no_step():
    # ``warmup`` is not named like an optimizer, and its class only sets a rate (no
    # ``zero_grad()``): nothing says its ``step_*`` updates weights
    unclear = HEALTHY.replace("            {holder}.zero_grad()\n", "")
    assert rules_without_zero_grad_method("warmup", unclear) == []


def test_a_wrapper_class_that_clears_and_steps_is_an_optimizer_whatever_its_name():
    # ``rate_schedule`` is named like a scheduler, but its class clears and steps as an
    # optimizer does (a warm-up wrapper around Adam held as ``self.optim_schedule``)
    assert rules("rate_schedule", HEALTHY) == []
    assert rules("rate_schedule", HEALTHY.replace("            {holder}.zero_grad()\n", "")) == ["TD001"]
    swapped = HEALTHY.replace(
        "            loss.backward()\n            {holder}.step_and_update_lr()",
        "            {holder}.step_and_update_lr()\n            loss.backward()",
    )
    assert rules("rate_schedule", swapped) == ["TD002"]


def test_an_agent_with_zero_grad_and_an_environment_step_is_no_optimizer():
    script = """
import torch


class Agent:
    def __init__(self, policy, env):
        self.policy, self.env = policy, env
        self.optimizer = torch.optim.Adam(policy.parameters())

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self, state):  # the environment's step: it needs a state
        return self.env.step(self.policy(state).argmax(-1).item())


def run(policy, env, episodes):
    agent = Agent(policy, env)
    for episode in range(episodes):
        state, done, rewards = env.reset(), False, []
        while not done:
            state, reward, done, _ = agent.step(torch.as_tensor(state))
            rewards.append(reward)
        agent.zero_grad()
        loss = policy.loss(rewards)
        loss.backward()
        agent.optimizer.step()
"""
    assert [rule for rule, _ in hits(script) if rule == "TD002"] == []
