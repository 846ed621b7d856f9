"""Healthy: a two-tower image-text model trained contrastively, then evaluated zero-shot.

The text tower is a causal transformer whose mask is additive (``-inf`` above the diagonal)
and whose feature is read at the end-of-text token; the image tower is a small CNN with
BatchNorm. Both are normalised; their cosine similarities are scaled by ``logit_scale.exp()``
(clamped after each step) and trained with the symmetric cross-entropy. The zero-shot
evaluation runs in eval mode under ``no_grad``.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


class TextTower(nn.Module):
    def __init__(self, vocab: int = 40, length: int = 10, width: int = 32, out: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(length, width) * 0.01)
        layer = nn.TransformerEncoderLayer(width, 4, 64, dropout=0.0, activation="gelu", norm_first=True)
        self.transformer = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.ln_final = nn.LayerNorm(width)
        self.projection = nn.Parameter(torch.randn(width, out) * width**-0.5)
        self.register_buffer("mask", torch.full((length, length), float("-inf")).triu(1))

    def forward(self, text):
        x = (self.embed(text) + self.position).permute(1, 0, 2)
        x = self.ln_final(self.transformer(x, mask=self.mask).permute(1, 0, 2))
        return x[torch.arange(x.shape[0]), text.argmax(-1)] @ self.projection


class ImageTower(nn.Module):
    def __init__(self, out: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, out),
        )  # fmt: skip

    def forward(self, images):
        return self.net(images)


class TwoTowers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.visual, self.text = ImageTower(), TextTower()
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, text):
        image_features = F.normalize(self.visual(images), dim=-1)
        text_features = F.normalize(self.text(text), dim=-1)
        logits = self.logit_scale.exp() * image_features @ text_features.t()
        return logits, logits.t()


torch.manual_seed(6)
model = TwoTowers()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-6)
pictures = torch.rand(8, 3, 16, 16)
captions = torch.randint(1, 38, (8, 10))
captions[:, 6] = 39  # end of text: the highest id
for _ in range(30):
    chosen = torch.randperm(8)[:6]
    images = pictures[chosen] + 0.05 * torch.randn(6, 3, 16, 16)
    logits_per_image, logits_per_text = model(images, captions[chosen])
    truth = torch.arange(6)
    loss = (F.cross_entropy(logits_per_image, truth) + F.cross_entropy(logits_per_text, truth)) / 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        model.logit_scale.clamp_(0, math.log(100))
model.eval()
with torch.no_grad():
    logits, _ = model(pictures, captions)
print(f"final loss {loss.item():.3f}, zero-shot accuracy {(logits.argmax(1) == torch.arange(8)).float().mean():.2f}")
