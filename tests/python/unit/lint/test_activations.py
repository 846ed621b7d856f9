"""What a module's output went through, for TD003/TD006 (lint/activations.py): a layer kept
as ``self.softmax`` is whatever ``__init__`` built, not what its name says. A character-level
classifier that stores ``nn.LogSoftmax`` under the name ``softmax`` gives log-probabilities,
which ``NLLLoss`` wants; the same network storing ``nn.Softmax`` there is still reported."""

from __future__ import annotations

from support.lint import hits

NETWORK = """
import torch
from torch import nn


class NameClassifier(nn.Module):
    def __init__(self, letters, hidden, classes):
        super().__init__()
        self.hidden_size = hidden
        self.to_hidden = nn.Linear(letters + hidden, hidden)
        self.to_output = nn.Linear(letters + hidden, classes)
        self.softmax = {layer}

    def forward(self, letter, state):
        joined = torch.cat((letter, state), 1)
        return self.softmax(self.to_output(joined)), self.to_hidden(joined)


net = NameClassifier(57, 128, 18)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.005)


def learn(word, label):
    state = torch.zeros(1, net.hidden_size)
    optimizer.zero_grad()
    for letter in word:
        output, state = net(letter, state)
    loss = criterion(output, label)
    loss.backward()
    optimizer.step()
"""


def test_a_log_softmax_layer_named_softmax_gives_log_probabilities():
    assert hits(NETWORK.format(layer="nn.LogSoftmax(dim=1)"), "TD006") == []


def test_a_softmax_layer_under_the_same_name_is_still_reported():
    assert hits(NETWORK.format(layer="nn.Softmax(dim=1)"), "TD006") == [("TD006", 28)]
