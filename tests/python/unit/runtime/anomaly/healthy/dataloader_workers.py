"""Healthy: a map-style dataset read by two DataLoader worker processes, a small regression."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        x = torch.randn(4, generator=g)
        return (x - x.mean()) / (x.std() + 1e-6), x.sum().unsqueeze(0)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _epoch in range(2):
        for x, y in DataLoader(Points(), batch_size=16, num_workers=2):
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print("trained")
