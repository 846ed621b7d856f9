"""Gradient flow and shape trace while paused: the sample CNN trains for a few steps.

Set a breakpoint on the marked line, start "Debug current file" (a torchdoctor configuration),
and when it stops run "Torch Doctor: Show Gradient Flow" and "Torch Doctor: Show Shape Trace".

- Shape trace: TinyCNN's calls in order, (16, 3, 32, 32) -> conv1 (16, 4, 32, 32) -> act ->
  pool (16, 4, 16, 16) -> conv2 (16, 8, 16, 16) -> act -> pool (16, 8, 8, 8) -> fc (16, 10);
  `act` and `pool` appear twice (they are called twice). Everything float32 on cpu.
- Gradient flow: conv1, conv2 and fc (weights and biases) with healthy gradients: no verdict.

Clicking a row opens the line of ``models/cnn.py`` that defines that layer.
"""

import torch
from torch import nn

from models.cnn import TinyCNN


def main(steps: int = 5) -> float:
    torch.manual_seed(0)
    images = torch.randn(16, 3, 32, 32)
    labels = torch.randint(0, 10, (16,))
    model = TinyCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for step in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        loss_value = loss.item()  # Set a breakpoint here (after backward)
        optimizer.step()
        print(f"step {step}: loss {loss_value:.4f}")
    return loss.item()


if __name__ == "__main__":
    main()
