# expect: TD013@16
"""A fine-tuning step pasted inside the validation block."""

import torch
import torch.nn as nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))

with torch.no_grad():
    val_loss = criterion(model(x), y)
    print(val_loss.item())
    optimizer.zero_grad()
    val_loss.backward()
    optimizer.step()
