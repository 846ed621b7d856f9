# expect: TD003@27
"""The model ends in softmax and its output goes into CrossEntropyLoss through an alias."""

import torch
from torch import nn
from torch.nn import CrossEntropyLoss as CE


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(20, 64), nn.ReLU())
        self.out = nn.Linear(64, 5)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        return self.softmax(self.out(self.body(x)))


model = Classifier()
crit = CE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(200):
    x = torch.randn(32, 20)
    y = torch.randint(0, 5, (32,))
    probs = model(x)
    loss = crit(probs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
