# expect: TD013@24
"""A speed-up attempt gone wrong: the classifier's forward pass was wrapped in no_grad to
"save memory", the loss is backpropagated after the block, and the classifier never learns."""

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in=32, n_out=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, n_out))

    def forward(self, x):
        return self.body(x)


clf = Classifier()
opt = torch.optim.SGD(clf.parameters(), lr=0.05, momentum=0.9)
for epoch in range(4):
    for feats, labels in batches:
        opt.zero_grad()
        with torch.no_grad():
            scores = clf(feats)
        loss = nn.functional.cross_entropy(scores, labels)
        loss.backward()
        opt.step()
