# expect: TD001@18
"""zero_grad() once per epoch instead of once per batch: gradients pile up within the epoch."""

import torch
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(256, 4), torch.randn(256, 1)), batch_size=32, shuffle=True)
net = nn.Linear(4, 1)
opt = optim.Adam(net.parameters(), lr=1e-2)
mse = nn.MSELoss()

for epoch in range(10):
    opt.zero_grad()
    for xb, yb in loader:
        loss = mse(net(xb), yb)
        loss.backward()
        opt.step()
