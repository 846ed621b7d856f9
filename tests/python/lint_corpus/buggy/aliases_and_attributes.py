# expect: TD003@18 TD001@20
"""Names resolved through import aliases and ``self`` attributes in a trainer class."""

import torch as T
from torch import nn, optim
import torch.nn.functional as fn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.loss = nn.CrossEntropyLoss()
        self.optimizer = optim.SGD(model.parameters(), lr=0.01)

    def fit(self, batches):
        for inputs, labels in batches:
            scores = fn.softmax(self.model(inputs), dim=-1)
            loss = self.loss(scores, labels)
            loss.backward()
            self.optimizer.step()

    def save(self, path):
        T.save(self.model.state_dict(), path)
