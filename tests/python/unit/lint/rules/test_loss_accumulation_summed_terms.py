"""TD007 on a loss that is one term of the backward's sum: an actor-critic update backpropagates
``critic * weight + actor - spread * beta`` and keeps per-term totals for its log. The critic
term (a ``.pow(2).mean()``, no criterion call) is a loss because the backward sums it; adding
it to the total without ``.item()`` keeps every minibatch's graph until the function returns.
The weight (the right operand of a product) is no loss, and ``.item()`` is quiet."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch


def update(policy, optimizer, batches, weight, beta):
    critic_total = 0.0
    weights_seen = 0.0
    for states, returns, advantages in batches:
        values, logp, spread = policy(states)
        critic = (returns - values).pow(2).mean()
        actor = -(logp * advantages).mean()
        optimizer.zero_grad()
        (critic * weight + actor - spread * beta).backward()
        optimizer.step()
        critic_total += {added}
        weights_seen += weight
    return critic_total / len(batches), weights_seen
"""


def test_a_summed_term_of_the_backward_accumulated_as_a_tensor_is_reported():
    assert hits(SCRIPT.format(added="critic"), "TD007") == [("TD007", 14)]


def test_the_term_released_with_item_is_quiet():
    assert hits(SCRIPT.format(added="critic.item()"), "TD007") == []
