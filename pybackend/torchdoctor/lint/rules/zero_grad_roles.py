"""TD001's reading of names when a file does not show what an optimizer was built from.

``g_optimizer`` built in another file (``define_optimizer(g_model, d_model)``) and stepped in a
loop that calls only ``d_model.zero_grad()``: the rule used to trust any model's
``zero_grad()`` to clear an optimizer it cannot see into, and so missed a GAN loop whose
generator's gradients are never cleared (2026-12-07, a super-resolution GAN of a fetched project
with its ``g_model.zero_grad()`` removed). A network's role is read from its name's words
(``netD``, ``optimizerG``, ``g_model``, ``actor_opt``): when the optimizer names one role and
every module cleared names another, the cleared modules are taken not to cover it. Any name
without a role keeps the old trust."""

from __future__ import annotations

import re
from typing import List, Optional

_ROLES = {
    "g": "generator",
    "gen": "generator",
    "generator": "generator",
    "d": "discriminator",
    "disc": "discriminator",
    "discriminator": "discriminator",
    "actor": "actor",
    "critic": "critic",
}
# Words of an identifier: ``netD`` -> net, D; ``optimizerG`` -> optimizer, G; ``D_opt`` -> D, opt.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def role(name: str) -> Optional[str]:
    """The one role the last part of ``name`` (``self.GAN.D_opt`` -> ``D_opt``) names, or None."""
    last = name.rpartition(".")[2]
    found = {_ROLES[word.lower()] for word in _WORDS.findall(last) if word.lower() in _ROLES}
    return found.pop() if len(found) == 1 else None


def roles_differ(optimizer: str, modules: List[str]) -> bool:
    """The optimizer names a role and every cleared module names another one."""
    wanted = role(optimizer)
    if wanted is None or not modules:
        return False
    others = [role(module) for module in modules]
    return all(other is not None and other != wanted for other in others)
