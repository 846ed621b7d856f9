"""TD002: optimizer.step() before loss.backward()."""

from support.lint import findings, hits

BAD = """
for x, y in loader:
    optimizer.zero_grad()
    loss = crit(model(x), y)
    optimizer.step()
    loss.backward()
"""


def test_step_before_backward_is_reported():
    assert hits(BAD, "TD002") == [("TD002", 4)]


def test_normal_order_is_fine():
    good = BAD.replace("    optimizer.step()\n    loss.backward()", "    loss.backward()\n    optimizer.step()")
    assert hits(good) == []


def test_two_optimizers_in_sequence_are_fine():
    text = """
for real in loader:
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
"""
    assert hits(text) == []


def test_in_a_step_function_without_loop():
    text = """
def train_step(batch):
    optimizer.zero_grad()
    loss = compute(batch)
    optimizer.step()
    loss.backward()
"""
    assert hits(text, "TD002") == [("TD002", 4)]


def test_conditional_step_at_the_top_of_an_accumulation_loop_is_fine():
    text = """
for i, batch in enumerate(loader):
    if i > 0 and i % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
    loss = compute(batch) / 4
    loss.backward()
"""
    assert hits(text) == []


# A GAN's discriminator trained on a real and a fake batch, each with its own backward (the
# DCGAN shape): the discriminator's step belongs after both.
PARTIAL = """
import torch
from torch import nn
gen = nn.Sequential(nn.Linear(8, 16))
disc = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())
opt_disc = torch.optim.Adam(disc.parameters(), lr=2e-4)
opt_gen = torch.optim.Adam(gen.parameters(), lr=2e-4)
bce = nn.BCELoss()
for batch in loader:
    disc.zero_grad()
    loss_real = bce(disc(batch), ones)
    loss_real.backward()
    sample = gen(torch.randn(16, 8))
    loss_fake = bce(disc(sample.detach()), zeros)
    loss_fake.backward()
    opt_disc.step()
    gen.zero_grad()
    loss_gen = bce(disc(sample), ones)
    loss_gen.backward()
    opt_gen.step()
"""


def test_a_gan_step_after_both_partial_backwards_is_fine():
    assert hits(PARTIAL) == []


def test_a_step_between_two_partial_backwards_of_its_losses_is_reported():
    text = PARTIAL.replace(
        "    loss_fake.backward()\n    opt_disc.step()\n", "    opt_disc.step()\n    loss_fake.backward()\n"
    )
    [finding] = findings(text, "TD002")
    assert finding.line == 14 and finding.severity == "warning"
    assert "`loss_real.backward()` (line 11)" in finding.message
    assert "`loss_fake.backward()` (line 15)" in finding.message


def test_a_step_between_backwards_is_quiet_when_the_later_backward_may_feed_the_next_step():
    """With both models cleared at the top, nothing clears between the later backward and the
    generator's step: that backward may be the generator's (its loss's graph is not followed),
    so the rule cannot be sure the gradients are lost and says nothing."""
    swapped = PARTIAL.replace(
        "    loss_fake.backward()\n    opt_disc.step()\n", "    opt_disc.step()\n    loss_fake.backward()\n"
    )
    text = swapped.replace("    gen.zero_grad()\n", "").replace(
        "    disc.zero_grad()\n", "    disc.zero_grad()\n    gen.zero_grad()\n"
    )
    assert hits(swapped, "TD002") != [] and hits(text) == []


def test_a_step_between_backwards_is_quiet_when_the_optimizer_is_not_cleared_in_the_loop():
    """Without a clear of its own in the loop the later gradients carry over to the next step
    (accumulation across iterations): not certainly lost."""
    text = PARTIAL.replace("    disc.zero_grad()\n", "").replace(
        "    loss_fake.backward()\n    opt_disc.step()\n", "    opt_disc.step()\n    loss_fake.backward()\n"
    )
    assert "TD002" not in {r for r, _ in hits(text)}


# A WGAN: the critic every iteration, the generator every n_critic iterations under an ``if``.
WGAN = """
for i, real in enumerate(loader):
    opt_d.zero_grad()
    loss_d = critic(gen(noise()).detach()).mean() - critic(real).mean()
    loss_d.backward()
    opt_d.step()
    if i % n_critic == 0:
        opt_g.zero_grad()
        loss_g = -critic(gen(noise())).mean()
        loss_g.backward()
        opt_g.step()
"""


def test_a_generator_phase_under_an_if_is_fine():
    assert hits(WGAN) == []


def test_a_step_before_the_backward_of_its_own_if_block_is_reported():
    text = WGAN.replace(
        "        loss_g.backward()\n        opt_g.step()", "        opt_g.step()\n        loss_g.backward()"
    )
    assert hits(text, "TD002") == [("TD002", 9)]


# ESRGAN: a warm-up branch that backpropagates, steps and leaves the iteration with ``continue``.
WARMUP = """
for i, (lr, hr) in enumerate(loader):
    opt_g.zero_grad()
    fake = gen(lr)
    pixel = crit(fake, hr)
    if i < warmup:
        pixel.backward()
        opt_g.step()
        continue
    loss_g = pixel + adv(fake)
    loss_g.backward()
    opt_g.step()
"""


def test_a_warm_up_branch_that_continues_is_fine():
    assert hits(WARMUP) == []


def test_a_step_moved_above_its_backward_after_a_branch_that_continues_is_reported():
    text = WARMUP.replace("    loss_g.backward()\n    opt_g.step()", "    opt_g.step()\n    loss_g.backward()")
    assert hits(text, "TD002") == [("TD002", 10)]
