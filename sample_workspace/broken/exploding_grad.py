"""Bug: exploding gradients in one layer, from an embedding normalised by hand after a
projection that starts almost at zero.

`Embedder` L2-normalises its embedding by hand (`z / z.norm(...)`), and its projection layer is
initialised with `std=1e-8` ("start the embedding near zero"). The forward pass looks healthy:
unit-length embeddings, a loss of about 1.4. But dividing by a length r divides the gradient by
r too: the projection's gradient is about 10^8 times what it should be (max |g| near 2e6, two
hundred times the threshold 10000), while every other layer's gradient stays below 1. One SGD
step throws the projection's weights to thousands.

Torch Doctor stops at the `loss.backward()` line of step 0, after the backward pass, and names
the projection. For example (the digits differ a little from CPU to CPU):

    Exploding gradient of `model.project.bias` (Linear `model.project`) at step 0: max |g| =
    1.92e6, above the threshold 10000; the first of 2 parameters past it, counting back from the
    loss; ...

The fix: initialise the projection normally (the default `nn.Linear` init), and normalise with
`torch.nn.functional.normalize`, whose `eps` keeps an all-zero vector finite.
"""

import torch
from torch import nn


class Embedder(nn.Module):
    def __init__(self, features: int = 16, width: int = 32, dim: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(features, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.project = nn.Linear(width, dim)
        nn.init.normal_(self.project.weight, std=1e-8)  # the bug: a near-zero embedding...
        nn.init.zeros_(self.project.bias)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.project(self.encoder(x))
        z = z / z.norm(dim=1, keepdim=True)  # ...then divided by its tiny length
        return self.head(z)


def train(steps: int = 10) -> float:
    torch.manual_seed(0)
    x = torch.randn(64, 16)
    y = torch.randint(0, 4, (64,))
    model = Embedder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for step in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()  # stopped here, after the backward pass
        optimizer.step()
    print(f"final loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
