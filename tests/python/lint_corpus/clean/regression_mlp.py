"""Tabular regression: split first, scale on the training part, MSE, running loss as floats."""

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 8)).astype(np.float32)
y = (X @ rng.normal(size=(8,)) + 0.1 * rng.normal(size=2000)).astype(np.float32)

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
scaler = StandardScaler()
X_train = scaler.fit_transform(X_train)
X_test = scaler.transform(X_test)

train_ds = TensorDataset(torch.from_numpy(X_train), torch.from_numpy(y_train).unsqueeze(1))
test_ds = TensorDataset(torch.from_numpy(X_test), torch.from_numpy(y_test).unsqueeze(1))
train_loader = DataLoader(train_ds, batch_size=64, shuffle=True)
test_loader = DataLoader(test_ds, batch_size=256)

model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)

for epoch in range(20):
    model.train()
    running = 0.0
    for xb, yb in train_loader:
        optimizer.zero_grad()
        pred = model(xb)
        loss = criterion(pred, yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
    train_mse = running / len(train_loader.dataset)

    model.eval()
    total = 0.0
    with torch.no_grad():
        for xb, yb in test_loader:
            total += criterion(model(xb), yb).item() * xb.size(0)
    print(f"epoch {epoch}: train mse {train_mse:.4f} test mse {total / len(test_ds):.4f}")
