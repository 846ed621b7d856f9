"""Healthy: a VQ-VAE whose codebook is learnt by exponential moving averages.

The quantiser replaces its codebook with a new ``nn.Parameter`` in every training forward (the
optimizer still holds the first one, which receives no gradient), passes gradients straight
through the nearest-code lookup, and reports its codebook perplexity with ``log(p + 1e-10)``
(most codes are unused: ``p`` is exactly 0 for them).
"""

import torch
import torch.nn.functional as F
from torch import nn


class EMAQuantizer(nn.Module):
    def __init__(self, codes: int = 32, dim: int = 8, decay: float = 0.99, eps: float = 1e-5) -> None:
        super().__init__()
        self.codebook = nn.Embedding(codes, dim)
        self.codebook.weight.data.normal_()
        self.register_buffer("cluster_size", torch.zeros(codes))
        self.sums = nn.Parameter(torch.randn(codes, dim))
        self.decay, self.eps, self.codes = decay, eps, codes

    def forward(self, z):
        flat = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        distances = (
            flat.pow(2).sum(1, keepdim=True) + self.codebook.weight.pow(2).sum(1) - 2 * flat @ self.codebook.weight.t()
        )
        onehot = F.one_hot(distances.argmin(1), self.codes).float()
        quantized = (onehot @ self.codebook.weight).view(z.shape[0], z.shape[2], z.shape[3], -1).permute(0, 3, 1, 2)
        if self.training:
            self.cluster_size = self.cluster_size * self.decay + (1 - self.decay) * onehot.sum(0)
            n = self.cluster_size.sum()
            self.cluster_size = (self.cluster_size + self.eps) / (n + self.codes * self.eps) * n
            self.sums = nn.Parameter(self.sums * self.decay + (1 - self.decay) * onehot.t() @ flat)
            self.codebook.weight = nn.Parameter(self.sums / self.cluster_size.unsqueeze(1))
        commitment = 0.25 * F.mse_loss(quantized.detach(), z)
        quantized = z + (quantized - z).detach()
        probs = onehot.mean(0)
        perplexity = torch.exp(-torch.sum(probs * torch.log(probs + 1e-10)))
        return commitment, quantized, perplexity


class VQVAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, 8, 4, 2, 1))
        self.quantizer = EMAQuantizer()
        self.decoder = nn.Sequential(nn.ConvTranspose2d(8, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 3, 4, 2, 1))

    def forward(self, x):
        vq_loss, quantized, perplexity = self.quantizer(self.encoder(x))
        return vq_loss, self.decoder(quantized), perplexity


torch.manual_seed(3)
model = VQVAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
prototypes = torch.rand(4, 3, 16, 16)
for _ in range(30):
    images = prototypes[torch.randint(0, 4, (8,))] + 0.05 * torch.randn(8, 3, 16, 16)
    optimizer.zero_grad()
    vq_loss, recon, perplexity = model(images)
    loss = F.mse_loss(recon, images) / 0.1 + vq_loss
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.3f}, perplexity {perplexity.item():.1f}")
