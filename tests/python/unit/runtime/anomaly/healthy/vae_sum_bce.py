"""Healthy: a VAE whose reconstruction term is ``nn.BCELoss(reduction='sum')``.

Summed over a batch of 64 images of 256 pixels, the reconstruction loss is in the tens of
thousands: a large number by construction, not an exploding layer.
"""

import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self, pixels: int = 256, hidden: int = 128, code: int = 8) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ReLU())
        self.mean, self.log_var = nn.Linear(hidden, code), nn.Linear(hidden, code)
        self.decoder = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(), nn.Linear(hidden, pixels), nn.Sigmoid())

    def forward(self, x):
        h = self.encoder(x)
        mean, log_var = self.mean(h), self.log_var(h)
        z = mean + torch.randn_like(mean) * (0.5 * log_var).exp()
        return self.decoder(z), mean, log_var


torch.manual_seed(5)
model = VAE()
bce = nn.BCELoss(reduction="sum")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
prototypes = (torch.rand(10, 256) > 0.5).float()
for _ in range(40):
    images = (prototypes[torch.randint(0, 10, (64,))] + 0.2 * torch.rand(64, 256)).clamp(0, 1)
    recon, mean, log_var = model(images)
    kl = -0.5 * torch.sum(1 + log_var - mean.pow(2) - log_var.exp())
    loss = bce(recon, images) + kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss per image {loss.item() / 64:.2f}")
