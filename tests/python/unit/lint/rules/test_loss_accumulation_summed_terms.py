"""TD007 on a loss that is one term of the backward's sum: an actor-critic update backpropagates
``critic_loss * weight + actor_loss - spread * beta`` and keeps per-term totals for its log. The
critic term (a ``.pow(2).mean()``, no criterion call) is a loss because the backward sums it;
adding it to the total without ``.item()`` keeps every minibatch's graph until the function
returns. The weight of a product is no loss (either side may be it: only a name that says
"loss" is taken from a product), and ``.item()`` is quiet."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch


def update(policy, optimizer, batches, weight, beta):
    critic_total = 0.0
    weights_seen = 0.0
    for states, returns, advantages in batches:
        values, logp, spread = policy(states)
        critic_loss = (returns - values).pow(2).mean()
        actor_loss = -(logp * advantages).mean()
        optimizer.zero_grad()
        (critic_loss * weight + actor_loss - spread * beta).backward()
        optimizer.step()
        critic_total += {added}
        weights_seen += weight
    return critic_total / len(batches), weights_seen
"""


def test_a_summed_term_of_the_backward_accumulated_as_a_tensor_is_reported():
    assert hits(SCRIPT.format(added="critic_loss"), "TD007") == [("TD007", 14)]


def test_the_term_released_with_item_is_quiet():
    assert hits(SCRIPT.format(added="critic_loss.item()"), "TD007") == []


def test_a_count_or_number_weighting_a_product_is_no_loss():
    script = """
import torch


def train(model, criterion, optimizer, loader, warmup):
    seen = 0
    ramp_total = 0.0
    for step, (x, y) in enumerate(loader):
        n = x.size(0)
        ramp = min(1.0, step / warmup)
        optimizer.zero_grad()
        (n * criterion(model(x), y) / 256 + ramp * model.kl()).backward()
        optimizer.step()
        seen += n
        ramp_total += ramp
    return seen, ramp_total
"""
    assert hits(script, "TD007") == []  # ``n.item()`` would raise: an int is no loss tensor
