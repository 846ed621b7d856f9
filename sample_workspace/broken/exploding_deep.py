"""Bug: exploding gradients in a deep plain network (60 tanh layers, no normalisation, no
residuals, weights initialised with gain 3).

The forward pass looks healthy (tanh keeps every activation in [-1, 1], the loss is about
1.5), but in this "chaotic" regime each layer multiplies the gradient on its way back, so the
first layers get gradients millions of times larger than the last. One SGD step wrecks them.

Torch Doctor stops at the `loss.backward()` line of step 0, after the backward pass:

    Exploding gradient of `model.layers.20.bias` (Linear `model.layers.20`) at step 0: max |g| =
    16044, above the threshold 10000; the first of 22 parameters past it, counting back from the
    loss; gradients grow toward the input, from 0.0968 nearest the loss to 5.97e5 at
    `model.layers.0.weight` (clip them with torch.nn.utils.clip_grad_norm_)
"""

import torch
from torch import nn


class DeepTanh(nn.Module):
    def __init__(self, depth: int = 60, width: int = 32, gain: float = 3.0) -> None:
        super().__init__()
        self.layers = nn.Sequential(*[block for _ in range(depth) for block in (nn.Linear(width, width), nn.Tanh())])
        self.head = nn.Linear(width, 4)
        for m in self.layers:
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=gain / width ** 0.5)  # the bug: gain 3, 60 layers deep
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers(x))


def train(steps: int = 10) -> float:
    torch.manual_seed(0)
    x = torch.randn(64, 32)
    y = torch.randint(0, 4, (64,))
    model = DeepTanh()
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
