"""A small classifier that trains "fine" but silently wrong. Torch Doctor underlines:

- the optimizer step in a loop that never calls optimizer.zero_grad()  (TD001, quick fix)
- softmax applied before CrossEntropyLoss                              (TD003, quick fix)
- the epoch loss summed as a tensor                                    (TD007, quick fix)
- a training DataLoader that never shuffles                            (TD017, quick fix)
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
features = torch.randn(600, 20)
labels = (features[:, :3].sum(dim=1) > 0).long() + (features[:, 3] > 1).long()
train_set = TensorDataset(features[:500], labels[:500])
train_loader = DataLoader(train_set, batch_size=32)

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(5):
    epoch_loss = 0.0
    for x, y in train_loader:
        logits = model(x)
        loss = criterion(F.softmax(logits, dim=1), y)
        loss.backward()
        optimizer.step()
        epoch_loss += loss
    print(f"epoch {epoch}: mean loss {epoch_loss.item() / len(train_loader):.4f}")
