"""Tabular regression with the classic data-pipeline mistakes (running it needs scikit-learn;
the squiggles do not). Torch Doctor underlines:

- the scaler fitted on all rows before train_test_split                 (TD011)
- an evaluate() helper without model.eval() and without torch.no_grad() (TD008, TD009)
- a checkpoint loaded with weights_only=False                           (TD015, quick fix)
"""

import numpy as np
import torch
import torch.nn as nn
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

rng = np.random.default_rng(0)
X = rng.normal(size=(1000, 6)).astype(np.float32)
y = (X @ rng.normal(size=6) + rng.normal(scale=0.1, size=1000)).astype(np.float32)

scaler = StandardScaler()
X_scaled = scaler.fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X_scaled, y, test_size=0.2, random_state=0)

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.MSELoss()


def evaluate(model, batches):
    total = 0.0
    for xb, yb in batches:
        total += loss_fn(model(xb).squeeze(1), yb).item()
    return total / len(batches)


x_train, t_train = torch.from_numpy(X_train), torch.from_numpy(y_train)
test_batches = [(torch.from_numpy(X_test), torch.from_numpy(y_test))]
for epoch in range(50):
    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model(x_train).squeeze(1), t_train)
    loss.backward()
    optimizer.step()
print(f"test mse {evaluate(model, test_batches):.4f}")

torch.save(model.state_dict(), "tabular.pt")
model.load_state_dict(torch.load("tabular.pt", weights_only=False))
