"""Try Torch Doctor's tensor summaries.

1. Set a breakpoint on the line marked below (F9), then start "Debug current file" (F5).
2. When it pauses, hover any name, look at the Variables view, add a Watch, or type a name in
   the Debug Console: each tensor shows one line such as
   ``tensor[64, 10] f32 cpu 2.5 KiB``, then a warning with the NaN count, mean, std and range.
3. Expand a tensor in Variables for its shape, dtype, device, stats, grad and first values.
"""

import numpy as np
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, in_features: int = 32, hidden: int = 64, classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def main() -> None:
    torch.manual_seed(0)
    images = torch.randn(64, 3, 32, 32)             # a batch of images
    features = images.flatten(1)[:, :32]            # a non-contiguous view
    labels = torch.randint(0, 10, (64,))            # integers
    mask = labels >= 5                              # booleans
    model = MLP()
    logits = model(features)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    weight = model.fc1.weight                       # a Parameter, with its .grad  # noqa: F841 (to inspect)
    broken = logits.detach().clone()
    broken[3, 5] = float("nan")                     # a NaN hiding in 640 numbers
    broken[7, 1] = float("inf")
    batch = {"images": images, "labels": labels, "logits": broken}
    outputs = [logits.detach(), broken, torch.zeros(64, 10)]
    half = images.half()                            # f16
    expanded = torch.arange(10.0).expand(1000, 10)  # a stride-0 view of 10 numbers
    sparse = torch.eye(8).to_sparse()               # sparse COO
    scores = np.linspace(0.0, 1.0, 50)              # numpy works too
    print(f"loss = {loss.item():.4f}")              # Set a breakpoint here
    print(half.shape, expanded.shape, sparse.shape, scores.shape, mask.sum().item(), batch.keys(), len(outputs))


if __name__ == "__main__":
    main()
