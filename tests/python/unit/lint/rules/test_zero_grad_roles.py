"""TD001 when the optimizers are built in another file (``zero_grad_roles``): a GAN loop that
clears only the discriminator's gradients (``d_model.zero_grad()``) never clears the
generator's optimizer's (``g_optimizer``), by their names; names without a role keep the trust
in a model's ``zero_grad()``."""

from __future__ import annotations

from support.lint import hits
from torchdoctor.lint.rules.zero_grad_roles import role, roles_differ

GAN = """
import torch
from models import build_models, build_optimizers

{g}, {d} = build_models()
{g_opt}, {d_opt} = build_optimizers({g}, {d})
criterion = torch.nn.BCEWithLogitsLoss()

for lr, gt in loader:
    {clear_g}
    sr = {g}(lr)
    g_loss = criterion({d}(sr), torch.ones(8, 1))
    g_loss.backward()
    {g_opt}.step()
    {d}.zero_grad(set_to_none=True)
    d_loss = criterion({d}(gt), torch.ones(8, 1)) + criterion({d}(sr.detach()), torch.zeros(8, 1))
    d_loss.backward()
    {d_opt}.step()
"""


def gan(clear_g: bool, g="g_model", d="d_model", g_opt="g_optimizer", d_opt="d_optimizer") -> str:
    clear = f"{g}.zero_grad(set_to_none=True)" if clear_g else "pass"
    return GAN.format(g=g, d=d, g_opt=g_opt, d_opt=d_opt, clear_g=clear)


def td001(text: str):
    return [line for rule, line in hits(text) if rule == "TD001"]


def test_the_generator_optimizer_is_not_cleared_by_the_discriminator():
    assert td001(gan(clear_g=True)) == []
    assert td001(gan(clear_g=False)) == [13]  # ``g_optimizer.step()``
    dcgan = dict(g="netG", d="netD", g_opt="optimizerG", d_opt="optimizerD")
    assert td001(gan(clear_g=False, **dcgan)) == [13]
    assert td001(gan(clear_g=True, **dcgan)) == []


def test_names_without_a_role_keep_the_trust():
    # ``model_a.zero_grad()`` may well clear what ``opt_a`` steps: nothing to say
    plain = dict(g="model_a", d="model_b", g_opt="opt_a", d_opt="opt_b")
    assert td001(gan(clear_g=False, **plain)) == []


def test_roles_are_read_from_the_words_of_a_name():
    assert [role(n) for n in ("netD", "optimizerG", "g_model", "self.GAN.D_opt", "actor_opt")] == [
        "discriminator",
        "generator",
        "generator",
        "discriminator",
        "actor",
    ]
    assert role("model") is None and role("gd") is None
    assert roles_differ("actor_opt", ["critic"]) and not roles_differ("actor_opt", ["critic", "actor"])
    assert not roles_differ("optimizer", ["netD"])  # the optimizer names no role
