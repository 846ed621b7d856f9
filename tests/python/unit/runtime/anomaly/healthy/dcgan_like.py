"""Healthy: an adversarial loop in the DCGAN shape, on 2-D points instead of images.

Two networks, two Adam optimizers, three ``backward()`` calls per iteration (the discriminator
on real data, on generated data, then the generator). The discriminator's losses fall while the
generator's rises and wobbles: that is the game, not a loss that refuses to decrease.
"""

import math

import torch
from torch import nn

torch.manual_seed(3)
latent = 8
generator = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
discriminator = nn.Sequential(
    nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1)
)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()


def real_batch(n: int):
    """Points on a ring of eight Gaussian blobs."""
    angle = torch.randint(0, 8, (n,)).float() * (2 * math.pi / 8)
    return torch.stack([angle.cos(), angle.sin()], dim=1) * 2 + 0.05 * torch.randn(n, 2)


batch = 64
ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)
for _ in range(150):
    # discriminator: real, then fake
    opt_d.zero_grad()
    loss_d_real = criterion(discriminator(real_batch(batch)), ones)
    loss_d_real.backward()
    fake = generator(torch.randn(batch, latent))
    loss_d_fake = criterion(discriminator(fake.detach()), zeros)
    loss_d_fake.backward()
    opt_d.step()
    # generator: make the discriminator say "real"
    opt_g.zero_grad()
    loss_g = criterion(discriminator(fake), ones)
    loss_g.backward()
    opt_g.step()
print(f"D {loss_d_real.item() + loss_d_fake.item():.3f}  G {loss_g.item():.3f}")
