"""A style-conditioned generator (after seed 004). Torch Doctor underlines:

- get_style_embedding() returning None when no branch matches           (TD012)
- F.dropout in forward without training=self.training                  (TD016, quick fix)
- validate() switching to eval mode, never switched back in the loop   (TD010, quick fix)
- a probe batch created on the CPU while the model is on `device`      (TD014, quick fix)
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

EMBEDDING_DIM = 16
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
style_table = {"watercolor": torch.randn(EMBEDDING_DIM), "ink": torch.randn(EMBEDDING_DIM)}


def get_style_embedding(meta):
    if meta.get("style_id") in style_table:
        return style_table[meta["style_id"]]
    if meta.get("description"):
        embedding = torch.full((EMBEDDING_DIM,), float(len(meta["description"])) / 100)
        return embedding


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(EMBEDDING_DIM + 8, 64)
        self.fc2 = nn.Linear(64, 32)

    def forward(self, style, noise):
        h = F.relu(self.fc1(torch.cat([style, noise], dim=1)))
        h = F.dropout(h, p=0.3)
        return torch.tanh(self.fc2(h))


@torch.no_grad()
def validate(generator, style):
    generator.eval()
    return generator(style, torch.randn(len(style), 8, device=device)).std().item()


generator = Generator().to(device)
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
style = get_style_embedding({"style_id": "ink"}).to(device).expand(32, -1)
for step in range(200):
    optimizer.zero_grad()
    fake = generator(style, torch.randn(32, 8, device=device))
    loss = (fake.mean(dim=0) - 0.5).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(step, loss.item(), validate(generator, style))

probe = torch.randn(4, 8)
print(generator(style[:4], probe).shape)
