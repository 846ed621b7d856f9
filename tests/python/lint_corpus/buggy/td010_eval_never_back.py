# expect: TD010@31
"""evaluate() puts the model in eval mode every epoch and nothing puts it back."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer, criterion):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in loader)


data = TensorDataset(torch.randn(300, 6), torch.randint(0, 3, (300,)))
train_loader = DataLoader(data, batch_size=30, shuffle=True)
val_loader = DataLoader(data, batch_size=100)
model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.3), nn.Linear(24, 3))
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()
for epoch in range(10):
    train_one_epoch(model, train_loader, optimizer, criterion)
    print(epoch, evaluate(model, val_loader))
