"""Evaluation done right: eval mode, no_grad, metrics as numbers, train mode restored,
and a checkpoint loaded safely."""

import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def build_model():
    return nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 3))


def validate(model, loader, criterion, device):
    was_training = model.training
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    all_probs = []
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            logits = model(inputs)
            total_loss += criterion(logits, targets).item() * targets.size(0)
            probs = logits.softmax(dim=1)
            all_probs.append(probs.cpu())
            correct += (probs.argmax(dim=1) == targets).sum().item()
            seen += targets.size(0)
    model.train(was_training)
    return total_loss / seen, correct / seen, torch.cat(all_probs)


def choose_head(kind, model):
    if kind == "linear":
        return model[-1]
    if kind == "pre":
        return model[-2]
    raise ValueError(f"unknown head kind: {kind!r}")


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build_model().to(device)
    if os.path.exists("classifier.pt"):
        model.load_state_dict(torch.load("classifier.pt", map_location=device, weights_only=True))
    data = TensorDataset(torch.randn(300, 20), torch.randint(0, 3, (300,)))
    val_loader = DataLoader(data, batch_size=64)
    loss, acc, probs = validate(model, val_loader, nn.CrossEntropyLoss(), device)
    print(f"val loss {loss:.3f} acc {acc:.2%} mean max prob {probs.max(dim=1).values.mean():.3f}")
    print(choose_head("linear", model))


if __name__ == "__main__":
    main()
