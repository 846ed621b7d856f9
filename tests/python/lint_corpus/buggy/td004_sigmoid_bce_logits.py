# expect: TD004@16
"""A binary classifier whose Sequential ends in Sigmoid, trained with BCEWithLogitsLoss."""

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
loss_fn = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters())

features = torch.randn(512, 12)
targets = (features.sum(dim=1, keepdim=True) > 0).float()
for epoch in range(30):
    optimizer.zero_grad()
    preds = model(features)
    loss = loss_fn(preds, targets)
    loss.backward()
    optimizer.step()
