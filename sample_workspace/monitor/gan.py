"""A small GAN: two optimizers, so the monitor draws two series (``opt0`` the discriminator,
``opt1`` the generator) with their own losses, learning rates and gradient norms.

The generator learns to draw samples of N(3, 0.5) from noise. Its loss may rise while the
discriminator's falls and the other way round: that is the game, not a bug, so the "not
decreasing" verdict stays off when a script has several losses.
What the view shows: two loss curves that wander against each other, two step-time stacks,
and no verdict card.
"""

import torch
from torch import nn


def main(steps: int = 100) -> None:
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    discriminator = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)
    for step in range(steps):
        real = 3 + 0.5 * torch.randn(64, 1)
        fake = generator(torch.randn(64, 4))
        opt_d.zero_grad()
        d_loss = criterion(discriminator(real), ones) + criterion(discriminator(fake.detach()), zeros)
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = criterion(discriminator(fake), ones)
        g_loss.backward()
        opt_g.step()
    print(f"d {d_loss.item():.3f} g {g_loss.item():.3f} mean {fake.mean().item():.2f}")


if __name__ == "__main__":
    main()
