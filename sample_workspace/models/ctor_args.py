"""A model whose constructor needs arguments, with the example Torch Doctor uses.

Torch Doctor cannot guess ``in_features``, ``hidden`` and ``n_classes``; the
``torchdoctor_example()`` function below builds the model and one batch, and
every check runs on that instead of inferring.
"""

import torch
import torch.nn as nn


class ConfigurableMLP(nn.Module):
    def __init__(self, in_features: int, hidden: int, n_classes: int, dropout: float = 0.0):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Dropout(dropout))
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.body(x))


def torchdoctor_example():
    """Torch Doctor's checks call this: the model and one small batch."""
    g = torch.Generator().manual_seed(0)
    model = ConfigurableMLP(in_features=12, hidden=24, n_classes=5)
    inputs = torch.randn(8, 12, generator=g)
    targets = torch.randint(0, 5, (8,), generator=g)
    return model, (inputs, targets)
