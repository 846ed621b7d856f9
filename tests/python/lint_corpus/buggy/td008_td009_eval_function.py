# expect: TD008@21 TD009@21
"""An evaluate() helper that neither switches to eval mode nor disables autograd."""

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(10, 50), nn.BatchNorm1d(50), nn.ReLU(), nn.Dropout(0.5),
                                    nn.Linear(50, 2))

    def forward(self, x):
        return self.layers(x)


def evaluate(model, loader):
    correct = 0
    for inputs, targets in loader:
        outputs = model(inputs)
        correct += (outputs.argmax(1) == targets).sum().item()
    return correct / len(loader.dataset)


net = Net()
print(evaluate(net, []))
