"""A small, healthy classifier: every Torch Doctor check passes on it.

Click "Overfit test" above the class: the loss should fall near zero within a
few dozen steps and the accuracy reach 100%.
"""

import torch.nn as nn


class TinyMLP(nn.Module):
    def __init__(self, in_features: int = 20, hidden: int = 32, n_classes: int = 4):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)
