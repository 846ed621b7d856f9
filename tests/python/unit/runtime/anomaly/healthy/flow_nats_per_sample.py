"""Healthy: a Glow-like flow on 3x64x64 images returning each sample's log-likelihood in nats (2026-12-07).

The model squeezes the image to 12 channels, runs two affine couplings (zero-initialised, so they
start as the identity) and returns ``log_p`` (a Gaussian log-density summed over all 12288 values)
and ``logdet`` (a sum of the couplings' per-sample sums); the loss is in bits per dimension. Those
sums are about -1.2e4 at initialisation: the watch called the flow's output exploding ("max |x| =
11690, above the threshold 10000") and stopped the run at step 0.
"""

import math

import torch
from torch import nn

torch.manual_seed(0)
DIMS = 3 * 64 * 64


class Coupling(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(channels // 2, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, channels, 3, padding=1)
        )
        nn.init.zeros_(self.net[2].weight)
        nn.init.zeros_(self.net[2].bias)

    def forward(self, x):
        kept, moved = x.chunk(2, 1)
        log_scale, shift = self.net(kept).chunk(2, 1)
        scale = torch.sigmoid(log_scale + 2)
        return torch.cat([kept, (moved + shift) * scale], 1), torch.log(scale).flatten(1).sum(1)


class Flow(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.couplings = nn.ModuleList([Coupling(12), Coupling(12)])

    def forward(self, x):
        batch = x.size(0)
        x = x.view(batch, 3, 32, 2, 32, 2).permute(0, 1, 3, 5, 2, 4).reshape(batch, 12, 32, 32)
        logdet = torch.zeros(batch)
        for coupling in self.couplings:
            x, step_logdet = coupling(x)
            logdet = logdet + step_logdet
            x = x.flip(1)
        log_p = (-0.5 * x.pow(2) - 0.5 * math.log(2 * math.pi)).flatten(1).sum(1)
        return log_p, logdet


flow = Flow()
optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
for _ in range(5):
    pixels = torch.randint(0, 256, (2, 3, 64, 64)).float()
    images = (pixels + torch.rand(2, 3, 64, 64)) / 256 - 0.5  # dequantised
    log_p, logdet = flow(images)
    loss = (-(log_p + logdet - DIMS * math.log(256)) / (DIMS * math.log(2))).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"bits per dim {loss.item():.2f}")
