"""A broken loss: the model ends in a softmax, and cross-entropy applies log-softmax again.

Nothing crashes and the loss even falls a little, but it cannot reach zero: the
Overfit test fails and says that the outputs are probabilities, not logits.
"""

import torch.nn as nn


class SoftmaxClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4), nn.Softmax(dim=1))

    def forward(self, x):
        return self.net(x)
