"""Healthy training: the training monitor should find nothing wrong here.

What the "Torch Doctor: Training" view shows: the training loss falling from about 1.4 with
ordinary mini-batch noise, a validation point after each epoch falling with it, a flat learning
rate (1e-3), gradient norms of a few tenths, update ratios near 1e-2, a step time that is mostly
forward and backward, steady memory, and no verdict card.
`torchdoctor run --monitor --report r.json healthy.py` exits 0 with 0 findings.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(n: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 20, generator=g)
    w = torch.randn(20, 4, generator=torch.Generator().manual_seed(99))
    y = (x @ w).argmax(dim=1)
    return TensorDataset(x, y)


def main(epochs: int = 8) -> None:
    torch.manual_seed(0)
    train = DataLoader(make_data(512, 0), batch_size=32, shuffle=True)
    val = DataLoader(make_data(256, 1), batch_size=64)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val_loss = sum(criterion(model(x), y).item() for x, y in val) / len(val)
        print(f"epoch {epoch}: train {loss.item():.3f} val {val_loss:.3f}")


if __name__ == "__main__":
    main()
