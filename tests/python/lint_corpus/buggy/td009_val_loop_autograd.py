# expect: TD009@13
"""The validation loop sets eval mode but keeps autograd on."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

val_loader = DataLoader(TensorDataset(torch.randn(200, 8), torch.randn(200, 1)), batch_size=50)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
model.eval()
errors = []
for xb, yb in val_loader:
    pred = model(xb)
    errors.append((pred - yb).abs().mean().item())
print(sum(errors) / len(errors))
