# expect: TD006@27
"""NLLLoss fed raw logits from a Linear head: the loss is unbounded below."""

import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab=1000, dim=32, classes=4):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens):
        pooled = self.embed(tokens)
        logits = self.fc(pooled)
        return logits


model = TextClassifier()
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    tokens = torch.randint(0, 1000, (16, 12))
    labels = torch.randint(0, 4, (16,))
    optimizer.zero_grad()
    loss = criterion(model(tokens), labels)
    loss.backward()
    optimizer.step()
