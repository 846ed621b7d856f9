# expect: TD001@30
"""A DCGAN-style loop clearing gradients through the models: the discriminator is cleared,
the generator's `zero_grad` was lost in a refactor, so its updates pile up."""

import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(16, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1), nn.Sigmoid())
painter = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 16), nn.Tanh())
critic_opt = torch.optim.Adam(critic.parameters(), lr=2e-4, betas=(0.5, 0.999))
painter_opt = torch.optim.Adam(painter.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCELoss()


def run(samples, epochs=3):
    for epoch in range(epochs):
        for real in samples:
            n = real.size(0)
            critic.zero_grad()
            real_score = critic(real)
            loss_real = bce(real_score, torch.ones(n, 1))
            loss_real.backward()
            fake = painter(torch.randn(n, 8))
            loss_fake = bce(critic(fake.detach()), torch.zeros(n, 1))
            loss_fake.backward()
            critic_opt.step()

            loss_painter = bce(critic(fake), torch.ones(n, 1))
            loss_painter.backward()
            painter_opt.step()
