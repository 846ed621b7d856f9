# expect: TD001@23
"""A GAN loop that clears the discriminator's optimizer but forgets the generator's."""

import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()

for it in range(1000):
    real = torch.randn(64, 16)
    fake = G(torch.randn(64, 8))
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(64, 1)) + bce(D(fake.detach()), torch.zeros(64, 1))
    d_loss.backward()
    opt_d.step()

    g_loss = bce(D(fake), torch.ones(64, 1))
    g_loss.backward()
    opt_g.step()
