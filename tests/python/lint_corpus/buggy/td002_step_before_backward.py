# expect: TD002@17
"""The update is applied before this batch's gradients exist."""

import torch
import torch.nn as nn


def train(model, loader, epochs=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for _ in range(epochs):
        for inputs, labels in loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            optimizer.step()
            loss.backward()
    return model
