"""The optimizer is not connected to the parameters: the layers sit in a plain list.

``nn.Module`` registers sub-modules assigned as attributes or kept in
``nn.ModuleList``; a Python list hides them from ``model.parameters()``, so an
optimizer built from it has nothing to update. The Overfit test fails and names
``self.layers``.
"""

import torch
import torch.nn as nn


class ListMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4)]  # BUG: use nn.ModuleList

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def torchdoctor_example():
    """Inference cannot see the layers either (they are in a list), so the batch is given here."""
    g = torch.Generator().manual_seed(0)
    return ListMLP(), (torch.randn(8, 20, generator=g), torch.randint(0, 4, (8,), generator=g))
