"""A hand-written loop: binary classification with BCEWithLogitsLoss on raw logits,
zero_grad(set_to_none=True) at the top, a step helper, and an inference-mode evaluator."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class BinaryNet(nn.Module):
    def __init__(self, d_in: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, 64)
        self.bn = nn.BatchNorm1d(64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn(self.fc1(x)))
        h = F.dropout(h, p=0.2, training=self.training)
        return self.fc2(h).squeeze(-1)


def make_data(n: int, d: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n, d)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).float()
    return x, y


def train_step(model, optimizer, criterion, xb, yb) -> float:
    optimizer.zero_grad(set_to_none=True)
    logits = model(xb)
    loss = criterion(logits, yb)
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.inference_mode()
def validate(model, x, y, batch_size=256):
    model.eval()
    hits = 0
    for start in range(0, len(x), batch_size):
        logits = model(x[start:start + batch_size])
        hits += ((torch.sigmoid(logits) > 0.5).float() == y[start:start + batch_size]).sum().item()
    return hits / len(x)


def main() -> None:
    torch.manual_seed(0)
    x_train, y_train = make_data(4096, 16)
    x_val, y_val = make_data(512, 16)
    model = BinaryNet(16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(1.0))
    for epoch in range(5):
        model.train()
        perm = torch.randperm(len(x_train))
        losses = []
        for start in range(0, len(x_train), 128):
            idx = perm[start:start + 128]
            losses.append(train_step(model, optimizer, criterion, x_train[idx], y_train[idx]))
        print(f"epoch {epoch}: loss {sum(losses) / len(losses):.4f} val acc {validate(model, x_val, y_val):.2%}")


if __name__ == "__main__":
    main()
