# expect: TD016@16 TD016@17
"""Dropout that model.eval() cannot switch off."""

import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5)
        x = nn.Dropout(0.2)(x)
        return self.fc2(x)
