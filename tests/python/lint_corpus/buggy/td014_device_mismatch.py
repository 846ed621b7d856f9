# expect: TD014@16 TD014@21
"""The model goes to the GPU; the inputs stay on the CPU."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(100, 10), torch.randint(0, 2, (100,))), batch_size=10, shuffle=True)

for xb, yb in loader:
    optimizer.zero_grad()
    loss = criterion(model(xb), yb.to(device))
    loss.backward()
    optimizer.step()

probe = torch.randn(4, 10)
print(model(probe))
