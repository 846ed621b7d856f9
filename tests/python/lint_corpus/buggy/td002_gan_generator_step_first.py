# expect: TD002@30
"""The discriminator's half is in order; the generator steps before its own backward, so
it applies stale gradients. D's earlier backward must not hide it."""

import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(16, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
painter = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 16))
critic_opt = torch.optim.Adam(critic.parameters(), lr=2e-4)
painter_opt = torch.optim.Adam(painter.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()


def run(samples, epochs=3):
    for epoch in range(epochs):
        for real in samples:
            n = real.size(0)
            critic_opt.zero_grad()
            fake = painter(torch.randn(n, 8))
            loss_critic = (bce(critic(real), torch.ones(n, 1))
                           + bce(critic(fake.detach()), torch.zeros(n, 1)))
            loss_critic.backward()
            critic_opt.step()

            painter_opt.zero_grad()
            loss_painter = bce(critic(fake), torch.ones(n, 1))
            # Stepping here applies the zeros that zero_grad just left.

            painter_opt.step()
            loss_painter.backward()
