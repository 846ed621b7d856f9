# expect: TD007@21 TD007@22
"""The epoch loss is summed as tensors: every batch's graph stays alive until the epoch ends."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(1024, 16), torch.randint(0, 2, (1024,))), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters())
history = []

for epoch in range(5):
    total_loss = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        total_loss += loss
        history.append(loss)
    print(f"epoch {epoch}: {total_loss / len(loader):.4f}")
